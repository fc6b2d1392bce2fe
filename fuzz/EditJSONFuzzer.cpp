//===- EditJSONFuzzer.cpp - libFuzzer target for the edit JSON boundary ---===//
//
// Feeds arbitrary bytes to parseEdits and the validators, in process (no
// CUDA parse). Properties: never crashes or aborts, and every accepted edit
// prints to JSON that parses back to the same edit.
//
//===----------------------------------------------------------------------===//

#include "optiml/Edit/EditJSON.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace optiml;

static KernelModel makeModel() {
  KernelModel M;
  KernelInfo K;
  K.Name = K.QualifiedName = "saxpy";
  LoopInfo L;
  L.Id = "saxpy/loop0";
  K.Loops.push_back(L);
  LaunchSite S;
  S.Id = "saxpy/launch0";
  S.Kernel = "saxpy";
  K.Launches.push_back(S);
  M.Kernels.push_back(K);
  KernelInfo T;
  T.Name = "scale";
  T.QualifiedName = "ns::scale";
  M.Kernels.push_back(T);
  return M;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static const KernelModel Model = makeModel();
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  auto Edits = parseEdits(Text);
  if (!Edits) {
    llvm::consumeError(Edits.takeError());
    return 0;
  }
  for (const Edit &E : *Edits) {
    llvm::consumeError(validateTarget(E, Model));
    std::string Once = editToJSON(E);
    auto Again = parseEdit(Once);
    if (!Again) {
      fprintf(stderr, "round trip failed: %s\n  %s\n", Once.c_str(),
              llvm::toString(Again.takeError()).c_str());
      abort();
    }
    if (editToJSON(*Again) != Once) {
      fprintf(stderr, "round trip changed the edit: %s\n", Once.c_str());
      abort();
    }
  }
  llvm::ArrayRef<Edit> All = *Edits;
  auto List = parseEdits(editsToJSON(All));
  if (!List) {
    llvm::consumeError(List.takeError());
    abort();
  }
  return 0;
}
