package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// componentRow is one row of the components figure: a label and K
// components of side×side pixels (row-major, one after another).
type componentRow struct {
	label string
	m     []float64
}

// componentsSVG draws rows of components as grayscale tiles, as the
// paper's Fig. 4: 0 (and below) black, 1 (and above) white, in 16 grays.
// Each gray is one path of unit squares (runs of equal pixels merged) in a
// group scaled to 8 px per pixel, which keeps the file a few KB.
func componentsSVG(rows []componentRow, side int) string {
	const (
		scale = 8.0
		gap   = 0.75 // between tiles, in pixels
		label = 2.0  // height of a row's label, in pixels
	)
	k := len(rows[0].m) / (side * side)
	tileStep := float64(side) + gap
	rowStep := label + float64(side) + gap
	width := math.Max((float64(k)*tileStep-gap+2*gap)*scale, 400) // room for the labels
	height := (float64(len(rows))*rowStep + gap) * scale
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	paths := make([]strings.Builder, 16)
	var blacks strings.Builder
	for r, row := range rows {
		y0 := float64(r)*rowStep + label + gap
		fmt.Fprintf(&b, `<text x="%g" y="%g">%s</text>`+"\n", gap*scale, (y0-0.5)*scale, html.EscapeString(row.label))
		for c := 0; c < k; c++ {
			x0 := gap + float64(c)*tileStep
			fmt.Fprintf(&blacks, "M%g %gh%dv%dh-%dz", x0, y0, side, side, side)
			px := row.m[c*side*side : (c+1)*side*side]
			for i := 0; i < side; i++ {
				for j := 0; j < side; {
					lv := grayLevel(px[i*side+j])
					run := 1
					for j+run < side && grayLevel(px[i*side+j+run]) == lv {
						run++
					}
					if lv > 0 {
						fmt.Fprintf(&paths[lv], "M%g %gh%dv1h-%dz", x0+float64(j), y0+float64(i), run, run)
					}
					j += run
				}
			}
		}
	}
	fmt.Fprintf(&b, `<g transform="scale(%g)">`+"\n", scale)
	fmt.Fprintf(&b, `<path fill="#000" d="%s"/>`+"\n", blacks.String())
	for lv := 1; lv < 16; lv++ {
		if paths[lv].Len() > 0 {
			h := "0123456789abcdef"[lv : lv+1]
			fmt.Fprintf(&b, `<path fill="#%s%s%s" d="%s"/>`+"\n", h, h, h, paths[lv].String())
		}
	}
	b.WriteString("</g>\n</svg>\n")
	return b.String()
}

// grayLevel maps v ∈ [0, 1] to 0..15 (clamped).
func grayLevel(v float64) int {
	return int(math.Round(15 * math.Max(0, math.Min(1, v))))
}

// traceLine is one line of the ELBO figure.
type traceLine struct {
	label string
	color string
	y     []float64
}

// tracesSVG draws ELBO traces against iterations (as the paper's Fig. 3,
// left), the y axis from lo to hi (values below lo drawn at lo), at most
// 100 points a line.
func tracesSVG(title string, lines []traceLine, lo, hi float64) string {
	const w, h, left, top, right, bottom = 520.0, 300.0, 70.0, 24.0, 150.0, 30.0
	n := 1
	for _, l := range lines {
		n = max(n, len(l.y))
	}
	px := func(i int) float64 { return left + (w-left-right)*float64(i)/float64(max(1, n-1)) }
	py := func(v float64) float64 {
		v = math.Max(lo, math.Min(hi, v))
		return top + (h-top-bottom)*(hi-v)/(hi-lo)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="11">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/><text x="%g" y="15">%s</text>`+"\n", left, html.EscapeString(title))
	fmt.Fprintf(&b, `<path fill="none" stroke="#000" d="M%g %gV%gH%g"/>`+"\n", left, top, h-bottom, w-right)
	for _, t := range []float64{lo, (lo + hi) / 2, hi} {
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%.3g</text>`+"\n", left-4, py(t)+4, t)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g">1</text><text x="%g" y="%g" text-anchor="end">%d iterations</text>`+"\n", left, h-bottom+14, w-right, h-bottom+14, n)
	for k, l := range lines {
		step := max(1, (len(l.y)+99)/100)
		var d strings.Builder
		for i := 0; i < len(l.y); i += step {
			c := "L"
			if i == 0 {
				c = "M"
			}
			fmt.Fprintf(&d, "%s%.0f %.0f", c, px(i), py(l.y[i]))
		}
		last := len(l.y) - 1
		fmt.Fprintf(&d, "L%.0f %.0f", px(last), py(l.y[last]))
		fmt.Fprintf(&b, `<path fill="none" stroke="%s" stroke-width="1.5" d="%s"/>`+"\n", l.color, d.String())
		fmt.Fprintf(&b, `<path stroke="%s" stroke-width="2" d="M%g %gh16"/><text x="%g" y="%g">%s</text>`+"\n",
			l.color, w-right+8, top+10+16*float64(k), w-right+28, top+14+16*float64(k), html.EscapeString(l.label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}
