// Command guest exports one function per thing a guest can ask of its WASI
// environment, and one per way a call can end, for the sandbox's tests.
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

// random mixes every source of randomness a Go program has.
//
//go:wasmexport random
func random() int64 {
	var b [8]byte
	crand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:])) ^ rand.Int63() ^ randv2.Int64()
}

// maporder hashes the order in which a map is iterated.
//
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

//go:wasmexport say
func say() { fmt.Println("hello from the guest") }

// readfile returns 1 if reading a file fails.
//
//go:wasmexport readfile
func readfile() int32 {
	if _, err := os.ReadFile("/etc/hostname"); err != nil {
		return 1
	}
	return 0
}

// dial returns 1 if dialling fails.
//
//go:wasmexport dial
func dial() int32 {
	if _, err := net.Dial("tcp", "127.0.0.1:80"); err != nil {
		return 1
	}
	return 0
}

// getenv returns the length of $GUEST.
//
//go:wasmexport getenv
func getenv() int32 { return int32(len(os.Getenv("GUEST"))) }

//go:wasmexport exit
func exit() { os.Exit(3) }

//go:wasmexport panic
func panicking() { panic("the guest gives up") }

//go:wasmexport deadlock
func deadlock() { <-make(chan int) }

// kept keeps what allocate allocates.
var kept [][]byte

//go:wasmexport allocate
func allocate(mib int32) {
	for range mib {
		kept = append(kept, make([]byte, 1<<20))
	}
}

// counter is state an instance keeps between calls.
var counter int64

// bump adds n to counter and returns it.
//
//go:wasmexport bump
func bump(n int64) int64 {
	counter += n
	return counter
}

//go:wasmexport spin
func spin() int64 {
	n := int64(0)
	for {
		n++
	}
}

//go:wasmexport sleep
func sleep() { time.Sleep(time.Millisecond) }

// sleeploop polls, as if for something another goroutine would set.
//
//go:wasmexport sleeploop
func sleeploop() {
	for {
		time.Sleep(100 * time.Millisecond)
	}
}

func main() {}
