#!/bin/sh
# doxygen's INPUT_FILTER for tools/*.cpp (docs/Doxyfile, FILTER_PATTERNS): only the first
# comment block, the tool's \page, goes to doxygen; the program's code is not documentation.
exec awk '{ print } /\*\// { exit }' "$1"
