// Package damage turns a file library's panic on a damaged file into an
// error naming the file.
package damage

import "fmt"

// Recover, deferred by a reader of name, turns a panic on the calling
// goroutine into *err: groot, for one, panics on a corrupt payload. A
// panic on a goroutine of the library's own cannot be caught this way.
func Recover(name string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: damaged file: %v", name, r)
	}
}
