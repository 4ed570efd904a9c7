package runtime

import (
	"strings"
	"testing"
)

// zeros is an endless stream of zero bytes, like /dev/zero.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// TestEndlessInput: the readers of data files stop on an endless stream
// without line ends (reading /dev/zero used to fill memory), having read
// little more than their limit.
func TestEndlessInput(t *testing.T) {
	z := &zeros{}
	_, err := ReadLDAC(z, "/dev/zero")
	if err == nil || !strings.HasPrefix(err.Error(), "/dev/zero:1: longer than 64 MiB") {
		t.Errorf("ReadLDAC: %v", err)
	}
	if z.n > 2*MaxLineBytes {
		t.Errorf("ReadLDAC read %d bytes", z.n)
	}
	z = &zeros{}
	_, _, err = ReadCSV(z)
	if err == nil || !strings.HasPrefix(err.Error(), "line 1: longer than 64 MiB") {
		t.Errorf("ReadCSV: %v", err)
	}
	z = &zeros{}
	_, err = SplitObject(z, []string{"N"})
	wantErr(t, err, `data: invalid JSON at line 1, column 1: invalid character '\x00' looking for beginning of value`)
	if z.n > 1<<20 {
		t.Errorf("SplitObject read %d bytes", z.n)
	}
	// Endless whitespace is valid JSON so far: the limit stops it.
	defer func(old int64) { MaxDataBytes = old }(MaxDataBytes)
	MaxDataBytes = 1 << 20
	_, err = SplitObject(&spaces{}, []string{"N"})
	wantErr(t, err, `data: the input is larger than 1048576 bytes (runtime.MaxDataBytes); is it a JSON file?`)
	_, err = SplitObject(strings.NewReader("{\"N\": ["+strings.Repeat("1, ", 1<<19)+"1]}"), []string{"N"})
	wantErr(t, err, `data: the input is larger than 1048576 bytes (runtime.MaxDataBytes); is it a JSON file?`)
}

// spaces is an endless stream of spaces.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestSplitObjectFirstByte: the early refusal of a document that cannot be
// an object gives the messages of the full parse.
func TestSplitObjectFirstByte(t *testing.T) {
	for _, in := range []string{"\x00", " \n x", "\xff", "'a'", "]", "\n\n  }"} {
		_, err := SplitObject(strings.NewReader(in), nil)
		want := syntaxError([]byte(in + "0")) // "0": the bad byte is not the last
		if err == nil || err.Error() != want.Error() {
			t.Errorf("%q: %v, want %v", in, err, want)
		}
	}
}
