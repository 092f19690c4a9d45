package damage

import "testing"

func TestRecoverNamesTheFile(t *testing.T) {
	read := func() (err error) {
		defer Recover("run.root", &err)
		var s []int
		_ = s[3] // a library's index out of range on a damaged file
		return nil
	}
	err := read()
	if err == nil || err.Error() != "run.root: damaged file: runtime error: index out of range [3] with length 0" {
		t.Fatalf("error %v", err)
	}
	fine := func() (err error) {
		defer Recover("run.root", &err)
		return nil
	}
	if err := fine(); err != nil {
		t.Fatal(err)
	}
}
