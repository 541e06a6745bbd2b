// check-status: which statements of a task's check script can fail without
// failing the check (test/check-status.test.ts); parses with mvdan.cc/sh.
module kubemix.local/gobuild/check-status

go 1.26.0

require mvdan.cc/sh/v3 v3.14.1
