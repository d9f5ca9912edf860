// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// coldwrite N: N one-byte writes to /dev/null, each made by coldWrite
// through os.(*File).Write and Go's syscall package: call site labels
// start at main.coldWrite, the standard library folded into "via Go".
package main

import (
	"os"
	"strconv"
)

//go:noinline
func coldWrite(f *os.File, b []byte) {
	f.Write(b)
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	f, _ := os.OpenFile("/dev/null", os.O_WRONLY, 0)
	b := []byte("x")
	for i := 0; i < n; i++ {
		coldWrite(f, b)
	}
}
