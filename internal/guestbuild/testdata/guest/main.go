// Command guest is the smallest module guestbuild's tests build: a main
// package that does nothing.
package main

func main() {}
