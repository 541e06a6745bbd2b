// Command clock-probe measures, inside a guest, what a slow clock costs the Go
// programs of a control plane: it prints the guest's clocksource, how long the
// kernel took to boot, and the wall time of four workloads, one
// "name<TAB>value" line each, for bench/guest-clock.ts. The workloads read the
// clock the way Go's runtime and kube-apiserver do (scheduling, timers,
// channel hand-offs) beside two that barely read it (TLS handshakes, JSON), so
// a difference between two guests that shows only in the first kind is the
// clock's.
package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

func main() {
	source, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		fail(err)
	}
	fmt.Printf("clocksource\t%s\n", strings.TrimSpace(string(source)))
	uptime, err := os.ReadFile("/proc/uptime")
	if err != nil {
		fail(err)
	}
	fmt.Printf("uptime at start (s)\t%s\n", strings.Fields(string(uptime))[0])
	report("time.Now x 1e6", clockReads)
	report("100 tickers of 200us, 300 ticks each", tickers)
	report("4 goroutine pairs, 1e5 sends + clock", channelPairs)
	report("20 TLS 1.3 handshakes, RSA-2048", handshakes)
	report("JSON round trips x 20000", jsonRoundTrips)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "clock-probe:", err)
	os.Exit(1)
}

func report(name string, work func()) {
	start := time.Now()
	work()
	fmt.Printf("%s (s)\t%.3f\n", name, time.Since(start).Seconds())
}

func clockReads() {
	for i := 0; i < 1_000_000; i++ {
		_ = time.Now()
	}
}

func tickers() {
	var wg sync.WaitGroup
	for g := 0; g < 100; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(200 * time.Microsecond)
			defer t.Stop()
			for i := 0; i < 300; i++ {
				<-t.C
			}
		}()
	}
	wg.Wait()
}

func channelPairs() {
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch := make(chan int)
			done := make(chan struct{})
			go func() {
				for range ch {
					_ = time.Now()
				}
				close(done)
			}()
			for i := 0; i < 100_000; i++ {
				ch <- i
			}
			close(ch)
			<-done
		}()
	}
	wg.Wait()
}

func handshakes() {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		fail(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "probe"},
		DNSNames:     []string{"probe"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		fail(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		fail(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(parsed)
	server := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	client := &tls.Config{RootCAs: roots, ServerName: "probe"}
	for i := 0; i < 20; i++ {
		a, b := net.Pipe()
		served := make(chan error, 1)
		go func() { served <- tls.Server(a, server).Handshake() }()
		if err := tls.Client(b, client).Handshake(); err != nil {
			fail(err)
		}
		if err := <-served; err != nil {
			fail(err)
		}
		a.Close()
		b.Close()
	}
}

func jsonRoundTrips() {
	type object struct {
		Name   string
		Items  []int
		Labels map[string]string
	}
	in := object{Name: "probe", Items: make([]int, 100), Labels: map[string]string{"a": "b", "c": "d"}}
	for i := 0; i < 20_000; i++ {
		data, err := json.Marshal(in)
		if err != nil {
			fail(err)
		}
		var out object
		if err := json.Unmarshal(data, &out); err != nil {
			fail(err)
		}
	}
}
