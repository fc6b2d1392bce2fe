//===- SpecFuzzer.cpp - libFuzzer target for synthesis specs --------------===//
//
// Feeds arbitrary bytes to parseSpec, as JSON or as YAML (the first byte
// chooses), then to the class checks and the program generator. Property:
// never crashes or aborts; every error names the spec's file.
//
//===----------------------------------------------------------------------===//

#include "optiml/Synth/Spec.h"
#include "optiml/Synth/Templates.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace optiml::synth;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  llvm::StringRef Path = Data[0] & 1 ? "spec.yaml" : "spec.json";
  llvm::StringRef Text(reinterpret_cast<const char *>(Data) + 1, Size - 1);
  auto S = parseSpec(Text, Path, "row-wise softmax");
  if (!S) {
    std::string Msg = llvm::toString(S.takeError());
    if (!llvm::StringRef(Msg).starts_with(Path.str() + ": ")) {
      fprintf(stderr, "error without the file's name: %s\n", Msg.c_str());
      abort();
    }
    return 0;
  }
  if (llvm::Error E = checkClass(*S)) {
    llvm::consumeError(std::move(E));
    return 0;
  }
  std::string P = generateProgram(*S, {"p.cu", {}});
  if (P.find("int main(int argc, char **argv)") == std::string::npos)
    abort();
  return 0;
}
