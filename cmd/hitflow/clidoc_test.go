package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "write docs/cli.md from the commands")

// TestCLIReference keeps docs/cli.md what the commands say about
// themselves; -update writes it.
func TestCLIReference(t *testing.T) {
	var buf bytes.Buffer
	root := newRootCmd(io.Discard, io.Discard)
	var prof profiles
	prof.addFlags(root)
	fmt.Fprintf(&buf, "# Command-line reference\n\n")
	fmt.Fprintf(&buf, "Generated from the commands by `go test ./cmd/hitflow/ -run CLIReference -update`; `hitflow help COMMAND` prints the same.\n")
	writeCommand(&buf, root)
	const name = "../../docs/cli.md"
	if *update {
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("%s is out of date: go test ./cmd/hitflow/ -run CLIReference -update", name)
	}
}

// writeCommand writes the section of c and those of its subcommands.
func writeCommand(w io.Writer, c *cobra.Command) {
	if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
		return
	}
	fmt.Fprintf(w, "\n## %s\n\n%s\n", c.CommandPath(), c.Short)
	if c.Long != "" {
		fmt.Fprintf(w, "\n%s\n", c.Long)
	}
	if c.Runnable() && c.HasParent() {
		fmt.Fprintf(w, "\n    %s\n", c.UseLine())
	}
	if c.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n\n```\n%s\n```\n", c.Example)
	}
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(w, "\nFlags:\n\n```\n%s```\n", fs.FlagUsages())
	}
	if c.HasParent() && c.InheritedFlags().HasAvailableFlags() {
		fmt.Fprintf(w, "\nAnd the flags of every command (see `hitflow`).\n")
	}
	for _, sub := range c.Commands() {
		writeCommand(w, sub)
	}
}
