//===- CheckSides.cpp - Checks over both sides of a CUDA file -------------===//
//
// A CUDA file is two programs: the host's and the device's. The rewriter
// and synthesize's written-code checks parse both and report what either
// side finds, once per place.
//
//===----------------------------------------------------------------------===//

#include "optiml/Edit/Checks.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/ADT/STLExtras.h"
#include <optional>
#include <thread>

using namespace llvm;

namespace optiml {

Expected<BothSides> parseBothSides(StringRef Code, StringRef FileName,
                                   const ParseConfig &Config) {
  std::optional<Expected<ParsedTU>> DeviceParse;
  std::thread DeviceThread([&] {
    DeviceParse.emplace(parseCuda(Code, FileName, Config, CudaSide::Device));
  });
  auto Host = parseCuda(Code, FileName, Config, CudaSide::Host);
  DeviceThread.join();
  Expected<ParsedTU> &Device = *DeviceParse;
  if (!Host) {
    consumeError(Device.takeError());
    return Host.takeError();
  }
  if (!Device)
    return Device.takeError();
  BothSides B;
  B.Host = std::move(*Host);
  B.Device = std::move(*Device);
  return B;
}

std::vector<CheckFailure>
checkIntroducedCodeBothSides(clang::ASTContext *Old, const BothSides &New,
                             const clang::tooling::Replacements &Repls,
                             const CheckOptions &Opts) {
  std::vector<CheckFailure> Host =
      checkIntroducedCode(Old, New.Host.AST->getASTContext(), Repls, Opts, "");
  for (CheckFailure &F : checkIntroducedCode(
           nullptr, New.Device.AST->getASTContext(), Repls, Opts, ""))
    if (none_of(Host, [&](const CheckFailure &H) {
          return H.Line == F.Line && H.Message == F.Message;
        }))
      Host.push_back(std::move(F));
  return Host;
}

std::vector<CheckFailure> deviceOnlyErrors(const ParsedTU &Device,
                                           ArrayRef<CheckFailure> Reported) {
  std::vector<CheckFailure> Dev = checkCompiles(Device, "device");
  erase_if(Dev, [&](const CheckFailure &F) {
    return any_of(Reported, [&](const CheckFailure &H) {
      return H.Line == F.Line && H.Column == F.Column &&
             StringRef(H.Message).ends_with(
                 StringRef(F.Message).drop_front(strlen("(device side) ")));
    });
  });
  return Dev;
}

} // namespace optiml
