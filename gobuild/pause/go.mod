// pause: our own sandbox process (main.go), no dependencies.
module kubemix.local/gobuild/pause

go 1.26.0
