// Command probe exports one function per thing a guest can ask its WASI
// environment, for the sandbox's tests.
package main

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand"
	randv2 "math/rand/v2"
	"net"
	"os"
	"time"
)

//go:wasmexport now
func now() int64 { return time.Now().UnixNano() }

//go:wasmexport random
func random() int64 {
	var b [8]byte
	crand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:])) ^ rand.Int63() ^ randv2.Int64()
}

//go:wasmexport maporder
func maporder() int64 {
	m := map[int]bool{}
	for i := range 100 {
		m[i] = true
	}
	h := fnv.New64()
	for k := range m {
		h.Write([]byte{byte(k)})
	}
	return int64(h.Sum64())
}

//go:wasmexport readfile
func readfile() int32 {
	if _, err := os.ReadFile("/etc/hostname"); err != nil {
		return 1
	}
	return 0
}

//go:wasmexport dial
func dial() int32 {
	if _, err := net.Dial("tcp", "127.0.0.1:80"); err != nil {
		return 1
	}
	return 0
}

//go:wasmexport say
func say() { fmt.Println("hello from the guest") }

//go:wasmexport getenv
func getenv() int32 { return int32(len(os.Getenv("PROBE"))) }

//go:wasmexport exit
func exit() { os.Exit(3) }

//go:wasmexport sleep
func sleep() { time.Sleep(time.Millisecond) }

//go:wasmexport spin
func spin() int64 {
	n := int64(0)
	for {
		n++
	}
}

func main() {}
