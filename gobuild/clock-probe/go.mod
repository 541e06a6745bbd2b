// clock-probe: what the guest's clock costs Go programs (bench/guest-clock.ts); no dependencies.
module kubemix.local/gobuild/clock-probe

go 1.26.0
