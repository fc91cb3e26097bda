module github.com/faultline/bench/porcupine

go 1.18

require github.com/anishathalye/porcupine v0.0.0-00010101000000-000000000000

// Porcupine's source is not vendored. This default points at a local copy;
// to use another path, build with a copy of this file whose replace comes
// from $PORCUPINE_SRC (see README.md).
replace github.com/anishathalye/porcupine => /tmp/porcupine-src
