// Runs one of the guides' complete programs (docs/examples/<name>.cpp, whose main() the build
// renames onelearn_doc_<name>): onelearn_docs_examples NAME [ARGS...]. The documentation's
// other examples (tests/docs/extract_examples.py) are only compiled and linked.
#include <cstring>
#include <iostream>

#define X(name) int onelearn_doc_##name(int, char**);
ONELEARN_DOC_PROGRAMS
#undef X

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: onelearn_docs_examples PROGRAM [ARGS...]; programs:";
#define X(name) std::cerr << ' ' << #name;
    ONELEARN_DOC_PROGRAMS
#undef X
    std::cerr << '\n';
    return 2;
  }
#define X(name) \
  if (std::strcmp(argv[1], #name) == 0) return onelearn_doc_##name(argc - 1, argv + 1);
  ONELEARN_DOC_PROGRAMS
#undef X
  std::cerr << "onelearn_docs_examples: no program '" << argv[1] << "'\n";
  return 2;
}
