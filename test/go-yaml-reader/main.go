// The API server's YAML reader, as a test oracle (issue 24).
//
// kubectl splits a multi-document stream into documents line by line (k8s.io/apimachinery
// pkg/util/yaml/decoder.go, YAMLReader over LineReader, which ends every line with a bare LF: a
// line that starts with "---" and holds nothing else but white space or a comment ends a
// document; anything else after "---" is an error) and converts each document with
// sigs.k8s.io/yaml's YAMLToJSON (sigs.k8s.io/yaml 1.3 over gopkg.in/yaml.v2, the versions of
// Debian's golang-k8s-sigs-yaml-dev), which is what the API server gets.
//
// Input: the YAML stream on standard input. Output: one line per document, either
//   {"ok":<the document as JSON>}      or      {"error":"<message>"}
// so that the caller can tell which document failed and why. A document that is empty after
// splitting (or only comments) gives {"ok":null}.
//
// With -batch the input is a sequence of streams, each prefixed by its length in bytes on a line
// of its own; the output is one line per stream holding a JSON array of the per-document lines
// above (a test reads hundreds of manifests with one process).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

type result struct {
	OK    json.RawMessage `json:"ok,omitempty"`
	Error *string         `json:"error,omitempty"`
}

// splitDocuments splits a stream as apimachinery's YAMLReader does (written from its behaviour).
func splitDocuments(stream []byte) ([][]byte, error) {
	var docs [][]byte
	var current bytes.Buffer
	r := bufio.NewReader(bytes.NewReader(stream))
	for {
		line, err := r.ReadBytes('\n')
		// kubectl reads each line with bufio.Reader.ReadLine, which drops the line's end, "\r\n" or
		// "\n", and writes it back as "\n" (k8s.io/apimachinery v0.37.2 pkg/util/yaml/decoder.go:447-461,
		// LineReader.Read): one CR before the LF goes ("x\r\r\n" is one line break for kubectl).
		if bytes.HasSuffix(line, []byte("\r\n")) {
			line = append(line[:len(line)-2], '\n')
		}
		if len(line) > 0 && line[len(line)-1] != '\n' {
			line = append(line, '\n')
		}
		if len(line) > 0 && bytes.HasPrefix(line, []byte("---")) {
			rest := strings.TrimSpace(string(line[3:]))
			if rest != "" && rest[0] != '#' {
				return docs, fmt.Errorf("invalid Yaml document separator: %s", rest)
			}
			if current.Len() != 0 {
				docs = append(docs, append([]byte(nil), current.Bytes()...))
				current.Reset()
			}
		} else {
			current.Write(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return docs, err
		}
	}
	if current.Len() != 0 {
		docs = append(docs, current.Bytes())
	}
	return docs, nil
}

func readStream(stream []byte) []result {
	docs, err := splitDocuments(stream)
	out := make([]result, 0, len(docs)+1)
	for i, doc := range docs {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			msg := fmt.Sprintf("document %d: %v", i, err)
			out = append(out, result{Error: &msg})
			continue
		}
		out = append(out, result{OK: j})
	}
	if err != nil {
		msg := fmt.Sprintf("document %d: %v", len(docs), err)
		out = append(out, result{Error: &msg})
	}
	return out
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	if len(os.Args) > 1 && os.Args[1] == "-batch" {
		for {
			header, err := in.ReadString('\n')
			if err == io.EOF && header == "" {
				return
			}
			n, perr := strconv.Atoi(strings.TrimSpace(header))
			if perr != nil {
				fmt.Fprintf(os.Stderr, "go-yaml-reader: bad length line %q\n", header)
				os.Exit(2)
			}
			stream := make([]byte, n)
			if _, err := io.ReadFull(in, stream); err != nil {
				fmt.Fprintf(os.Stderr, "go-yaml-reader: short stream: %v\n", err)
				os.Exit(2)
			}
			line, _ := json.Marshal(readStream(stream))
			w.Write(line)
			w.WriteByte('\n')
		}
	}
	stream, err := io.ReadAll(in)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-yaml-reader: %v\n", err)
		os.Exit(2)
	}
	for _, r := range readStream(stream) {
		line, _ := json.Marshal(r)
		w.Write(line)
		w.WriteByte('\n')
	}
}
