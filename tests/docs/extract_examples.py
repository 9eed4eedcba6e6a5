#!/usr/bin/env python3
"""Collects every C++ example of the documentation into one source file that must compile.

    extract_examples.py REPO_ROOT OUTPUT.cpp [--skip REGEX]...

Sources, in a fixed order:
  - the public headers (include/onelearn/**/*.hpp, not detail/): each \\code ... \\endcode
    (or @code ... @endcode, or \\code{.cpp}; not \\code{.unparsed} or {.sh}) block of a doc
    comment (/** */ or ///);
  - the guides (docs/*.md): each ```cpp fenced block.
The complete programs of docs/examples/ are compiled and run on their own (docs_tests.cmake).

Each example becomes the body of one function, `void example()` in its own namespace inside
`onelearn_doc_fixture::<context>`: tests/docs/fixture.hpp declares there the
names examples use without declaring them (X_train, y_train, comm, model, ...). The context is
`regression` unless the doc comment says otherwise on the line before the example, in an HTML
comment that doxygen does not show:  <!-- example-context: classification -->. Contexts:
regression, classification, nn, scope (the example declares things at namespace scope, e.g. a
class template: it is not wrapped in a function). `#include` lines are hoisted to the top.
A file whose path matches a --skip REGEX (an optional part that is not built) is left out.
Exit status 1, naming the file and line, for an example that is not closed.
"""
import pathlib
import re
import sys

CONTEXTS = {"regression", "classification", "nn", "scope"}


def header_examples(path, text):
    """(line, context, code) of each \\code block of the doc comments of a header."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"\s*(?:\*|///|//!)?\s*[\\@]code(\{[^}]*\})?\s*$", lines[i])
        # \code{.unparsed}, \code{.sh}, ...: text that is not C++ (tables, shell commands)
        if m and m.group(1) not in (None, "{.cpp}"):
            m = None
        if not m or not is_doc_line(lines, i):
            i += 1
            continue
        context = "regression"
        prev = strip_prefix(lines[i - 1]) if i > 0 else ""
        cm = re.search(r"<!--\s*example-context:\s*(\w+)\s*-->", prev)
        if cm:
            context = cm.group(1)
            if context not in CONTEXTS:
                sys.exit(f"{path}:{i}: unknown example context '{context}' (one of {sorted(CONTEXTS)})")
        start = i + 1
        j = start
        while j < len(lines) and not re.match(r"\s*(?:\*|///|//!)?\s*[\\@]endcode\s*$", lines[j]):
            j += 1
        if j == len(lines):
            sys.exit(f"{path}:{i + 1}: \\code without \\endcode")
        body = [strip_prefix(l, keep_indent=True) for l in lines[start:j]]
        out.append((start + 1, context, dedent(body)))
        i = j + 1
    return out


def is_doc_line(lines, i):
    """Whether line i is inside a /** */ block or a /// comment."""
    s = lines[i].lstrip()
    if s.startswith("///") or s.startswith("//!"):
        return True
    # inside a block comment: look back for its opening
    for k in range(i, -1, -1):
        if "*/" in lines[k] and k != i:
            return False
        if lines[k].lstrip().startswith("/**") or lines[k].lstrip().startswith("/*!"):
            return True
    return False


def strip_prefix(line, keep_indent=False):
    m = re.match(r"^\s*(\*|///|//!)( ?)(.*)$", line)
    if not m:
        return line if keep_indent else line.strip()
    return m.group(3) if keep_indent else m.group(3).strip()


def dedent(body):
    indents = [len(l) - len(l.lstrip()) for l in body if l.strip()]
    cut = min(indents) if indents else 0
    return [l[cut:] for l in body]


def markdown_examples(path, text):
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if re.match(r"\s*```\s*(cpp|c\+\+)\s*$", lines[i]):
            context = "regression"
            cm = re.search(r"<!--\s*example-context:\s*(\w+)\s*-->", lines[i - 1] if i else "")
            if cm:
                context = cm.group(1)
            j = i + 1
            while j < len(lines) and not re.match(r"\s*```\s*$", lines[j]):
                j += 1
            if j == len(lines):
                sys.exit(f"{path}:{i + 1}: ``` block not closed")
            out.append((i + 2, context, dedent(lines[i + 1:j])))
            i = j + 1
        else:
            i += 1
    return out


def main():
    args = sys.argv[1:]
    skips = []
    while "--skip" in args:
        k = args.index("--skip")
        skips.append(re.compile(args[k + 1]))
        del args[k:k + 2]
    root, output = pathlib.Path(args[0]), pathlib.Path(args[1])
    sources = sorted(p for p in (root / "include/onelearn").rglob("*.hpp") if "detail" not in p.parts)
    sources += sorted((root / "docs").glob("*.md"))
    includes, chunks, count = [], [], 0
    for path in sources:
        rel = path.relative_to(root).as_posix()
        if any(s.search(rel) for s in skips):
            continue
        text = path.read_text(encoding="utf-8")
        found = header_examples(rel, text) if path.suffix == ".hpp" else markdown_examples(rel, text)
        for line, context, body in found:
            count += 1
            code = []
            for l in body:
                if l.lstrip().startswith("#include"):
                    if l.strip() not in includes:
                        includes.append(l.strip().split("//")[0].strip())
                else:
                    code.append(l)
            name = f"example_{count}"
            chunks.append(f"// ---- {rel}:{line} ({context})")
            chunks.append(f'#line {line} "{rel}"')
            if context == "scope":
                chunks.append(f"namespace onelearn_doc_examples::{name} {{")
                chunks.extend(code)
                chunks.append("}")
            else:
                # Inside the context's namespace, so that its names hide global ones (::pipe).
                chunks.append(f"namespace onelearn_doc_fixture::{context}::{name} {{")
                chunks.append("[[maybe_unused]] void example() {")
                chunks.extend(code)
                chunks.append("}")
                chunks.append("}")
    # The ONNX headers first: ONNX's defs/parser.h has an enumerator MAP_TYPE, which
    # <sys/mman.h> (pulled in by core/detail/huge_pages.hpp) defines as a macro.
    includes = sorted(set(includes), key=lambda i: ("/onnx/" not in i, i))
    text = ["// Generated by tests/docs/extract_examples.py from the documentation: do not edit."]
    text += [i for i in includes if "/onnx/" in i]
    text += ['#include "docs/fixture.hpp"'] + [i for i in includes if "/onnx/" not in i]
    text += ["", f"// {count} examples"] + chunks + [""]
    new = "\n".join(text)
    if not output.exists() or output.read_text() != new:  # unchanged: no rebuild
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(new)
    print(f"extract_examples: {count} examples -> {output}")


if __name__ == "__main__":
    main()
