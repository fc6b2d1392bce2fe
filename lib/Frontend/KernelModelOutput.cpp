//===- KernelModelOutput.cpp - JSON and text views of the model -----------===//

#include "optiml/Frontend/KernelModelOutput.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include <nlohmann/json.hpp>

using namespace llvm;
using json = nlohmann::ordered_json;

namespace optiml {

namespace {

json pos(const SourcePos &P) {
  return json{{"line", P.Line}, {"column", P.Column}, {"offset", P.Offset}};
}

json span(const SourceSpan &S) {
  return json{{"begin", pos(S.Begin)}, {"end", pos(S.End)}};
}

json sites(const std::vector<CallSite> &Calls) {
  json A = json::array();
  for (const CallSite &C : Calls) {
    json J{{"name", C.Name}, {"line", C.Pos.Line}, {"column", C.Pos.Column}};
    J["loop"] = C.Loop.empty() ? json(nullptr) : json(C.Loop);
    A.push_back(std::move(J));
  }
  return A;
}

json optionalString(const std::string &S) {
  return S.empty() ? json(nullptr) : json(S);
}

/// \p Path relative to the directory of \p Main when it lies under it.
std::string displayPath(StringRef Path, StringRef Main) {
  SmallString<256> Abs(Main);
  (void)sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  StringRef Dir = sys::path::parent_path(Abs);
  if (!Dir.empty() && Path.starts_with(Dir) && Path.size() > Dir.size() &&
      sys::path::is_separator(Path[Dir.size()]))
    return Path.drop_front(Dir.size() + 1).str();
  return Path.str();
}

json kernelToJSON(const KernelInfo &K) {
  json J;
  J["name"] = K.Name;
  J["qualified_name"] = K.QualifiedName;
  J["usr"] = K.USR;
  J["range"] = span(K.Range);
  J["class"] = toString(K.Class);
  J["class_reason"] = K.ClassReason;
  J["is_template"] = K.IsTemplate;
  J["template_params"] = K.TemplateParams;
  J["instantiations"] = K.Instantiations;
  J["in_macro"] = K.InMacro;
  J["launch_bounds"] = K.LaunchBounds;
  J["uses_2d_threads"] = K.Uses2DThreads;

  json Params = json::array();
  for (const ParamInfo &P : K.Params) {
    json JP{{"index", P.Index},
            {"name", P.Name},
            {"type", P.Type},
            {"pointer", P.IsPointer},
            {"element_type", P.ElementType},
            {"element_size", P.ElementSize},
            {"const", P.IsConst},
            {"restrict", P.IsRestrict},
            {"floating_point", P.IsFloat}};
    if (P.IsPointer) {
      JP["read"] = P.Read;
      JP["written"] = P.Written;
    }
    // What eval follows: the elements of an array of device pointers, or
    // the pointer members of the structs the parameter points to.
    if (P.ElementIsPointer)
      JP["points_to"] = P.InnerElementType;
    if (!P.ElementPointerFields.empty()) {
      json Members = json::array();
      for (const PointerField &F : P.ElementPointerFields)
        Members.push_back({{"name", F.Name},
                           {"offset", F.Offset},
                           {"points_to", F.InnerType}});
      JP["pointer_members"] = std::move(Members);
    }
    Params.push_back(std::move(JP));
  }
  J["params"] = std::move(Params);

  json Launches = json::array();
  for (const LaunchSite &L : K.Launches) {
    Launches.push_back(json{{"id", L.Id},
                            {"caller", L.Caller},
                            {"line", L.Range.Begin.Line},
                            {"column", L.Range.Begin.Column},
                            {"grid", L.Grid},
                            {"block", L.Block},
                            {"shared", optionalString(L.Shared)},
                            {"stream", optionalString(L.Stream)},
                            {"template_args", L.TemplateArgs},
                            {"args", L.Args},
                            {"in_macro", L.InMacro},
                            {"file", L.File},
                            {"grid_in_place", L.GridInPlace},
                            {"block_in_place", L.BlockInPlace}});
  }
  J["launches"] = std::move(Launches);
  json Uses = json::array();
  for (const AddressUse &U : K.AddressTaken)
    Uses.push_back(json{{"file", U.File},
                        {"line", U.Pos.Line},
                        {"column", U.Pos.Column},
                        {"passed_to", optionalString(U.PassedTo)}});
  J["address_taken"] = std::move(Uses);

  json Loops = json::array();
  for (const LoopInfo &L : K.Loops) {
    json JL{{"id", L.Id},
            {"kind", L.Kind},
            {"line", L.Range.Begin.Line},
            {"parent", optionalString(L.Parent)},
            {"depth", L.Depth},
            {"induction_var", optionalString(L.InductionVar)},
            {"init", optionalString(L.Init)},
            {"bound", optionalString(L.Bound)},
            {"step", optionalString(L.Step)}};
    JL["trip_count"] = L.TripCount ? json(*L.TripCount) : json(nullptr);
    JL["unroll_pragma"] = L.HasUnrollPragma;
    JL["thread_dependent_bounds"] = L.ThreadDependentBounds;
    Loops.push_back(std::move(JL));
  }
  J["loops"] = std::move(Loops);

  json Accesses = json::array();
  for (const MemoryAccess &A : K.Accesses) {
    json JA{{"space", toString(A.Space)},
            {"base", A.Base},
            {"param", A.ParamIndex >= 0 ? json(A.ParamIndex) : json(nullptr)},
            {"index", A.Index},
            {"read", A.IsRead},
            {"write", A.IsWrite},
            {"atomic", A.IsAtomic},
            {"pattern", toString(A.Pattern)},
            {"coalesced", A.Pattern == Coalescing::Unit},
            {"stride", A.Stride ? json(*A.Stride) : json(nullptr)},
            {"indirect", A.Indirect},
            {"pointer_read_from", optionalString(A.Through)},
            {"loop", optionalString(A.Loop)},
            {"line", A.Pos.Line},
            {"column", A.Pos.Column}};
    Accesses.push_back(std::move(JA));
  }
  J["accesses"] = std::move(Accesses);

  json Shared = json::array();
  for (const SharedDecl &S : K.Shared)
    Shared.push_back(json{{"name", S.Name},
                          {"type", S.Type},
                          {"bytes", S.Bytes ? json(*S.Bytes) : json(nullptr)},
                          {"dynamic", S.Dynamic}});
  J["shared"] = std::move(Shared);
  J["syncthreads"] = sites(K.Syncthreads);
  J["atomics"] = sites(K.Atomics);
  J["math"] = sites(K.MathCalls);
  J["warp_primitives"] = sites(K.WarpPrimitives);
  J["device_calls"] = sites(K.DeviceCalls);
  // The file that defines the kernel: positions above are in it.
  J["file"] = K.File;
  return J;
}

} // namespace

std::string kernelModelToJSON(const KernelModel &M, int Indent) {
  json J;
  J["file"] = M.File;
  json Kernels = json::array();
  for (const KernelInfo &K : M.Kernels)
    Kernels.push_back(kernelToJSON(K));
  J["kernels"] = std::move(Kernels);
  // A path or a name may hold bytes that are not UTF-8 (a file name is any
  // bytes): they become U+FFFD rather than an exception.
  return J.dump(Indent, ' ', false, json::error_handler_t::replace);
}

void printKernelSummary(raw_ostream &OS, const KernelModel &M, bool Color) {
  auto Bold = [&](StringRef S) {
    if (Color)
      OS.changeColor(raw_ostream::SAVEDCOLOR, /*Bold=*/true);
    OS << S;
    if (Color)
      OS.resetColor();
  };
  StringRef File = sys::path::filename(M.File);
  OS << File << ": " << M.Kernels.size() << " kernel"
     << (M.Kernels.size() == 1 ? "" : "s") << "\n";
  for (const KernelInfo &K : M.Kernels) {
    OS << "\n";
    Bold("kernel " + K.QualifiedName);
    std::string KFile =
        K.File.empty() ? File.str() : displayPath(K.File, M.File);
    OS << " (" << KFile << ":" << K.Range.Begin.Line << ") ["
       << toString(K.Class) << ": " << K.ClassReason << "]\n";
    if (K.IsTemplate) {
      OS << "  template <";
      for (size_t I = 0; I < K.TemplateParams.size(); ++I)
        OS << (I ? ", " : "") << K.TemplateParams[I];
      OS << ">; launched as: ";
      if (K.Instantiations.empty())
        OS << "(none)";
      for (size_t I = 0; I < K.Instantiations.size(); ++I)
        OS << (I ? ", " : "") << K.Instantiations[I];
      OS << "\n";
    }
    if (!K.LaunchBounds.empty()) {
      OS << "  __launch_bounds__(";
      for (size_t I = 0; I < K.LaunchBounds.size(); ++I)
        OS << (I ? ", " : "") << K.LaunchBounds[I];
      OS << ")\n";
    }
    OS << "  params:\n";
    for (const ParamInfo &P : K.Params) {
      OS << "    " << P.Name << ": " << P.Type;
      if (P.IsPointer) {
        OS << " (" << P.ElementType;
        if (P.ElementSize)
          OS << ", " << P.ElementSize << " B";
        OS << "; "
           << (P.Read && P.Written ? "read-write"
               : P.Written         ? "written"
               : P.Read            ? "read"
                                   : "unused");
        if (P.ElementIsPointer)
          OS << "; pointers to " << P.InnerElementType;
        for (size_t I = 0; I < P.ElementPointerFields.size(); ++I)
          OS << (I ? ", " : "; pointer members ")
             << P.ElementPointerFields[I].Name;
        OS << ")";
      }
      OS << "\n";
    }
    OS << "  launches:" << (K.Launches.empty() ? " none in this file" : "")
       << "\n";
    for (const LaunchSite &L : K.Launches) {
      OS << "    " << L.Id << " at line " << L.Range.Begin.Line;
      if (!L.File.empty() && L.File != M.File)
        OS << " of " << displayPath(L.File, M.File);
      OS << " in " << (L.Caller.empty() ? "?" : L.Caller) << ": <<<" << L.Grid
         << ", " << L.Block;
      if (!L.Shared.empty())
        OS << ", " << L.Shared;
      if (!L.Stream.empty())
        OS << ", " << L.Stream;
      OS << ">>>";
      if (!L.TemplateArgs.empty()) {
        OS << " with <";
        for (size_t I = 0; I < L.TemplateArgs.size(); ++I)
          OS << (I ? ", " : "") << L.TemplateArgs[I];
        OS << ">";
      }
      OS << "\n";
    }
    for (const AddressUse &U : K.AddressTaken) {
      OS << "    address taken at line " << U.Pos.Line;
      if (U.File != M.File)
        OS << " of " << displayPath(U.File, M.File);
      OS << (U.PassedTo.empty() ? std::string(" (a function pointer)")
                                : " (passed to " + U.PassedTo + ")")
         << ": launches through it are not listed\n";
    }
    if (!K.Loops.empty()) {
      OS << "  loops:\n";
      for (const LoopInfo &L : K.Loops) {
        OS.indent(4 + 2 * L.Depth)
            << L.Id << " (" << L.Kind << ", line " << L.Range.Begin.Line;
        if (!L.InductionVar.empty())
          OS << ", over " << L.InductionVar;
        if (L.TripCount)
          OS << ", " << *L.TripCount << " trips";
        if (L.HasUnrollPragma)
          OS << ", #pragma unroll";
        OS << ")\n";
      }
    }
    if (!K.Accesses.empty()) {
      OS << "  memory accesses:\n";
      for (const MemoryAccess &A : K.Accesses) {
        OS << "    "
           << (A.IsAtomic              ? "atomic"
               : A.IsRead && A.IsWrite ? "read-write"
               : A.IsWrite             ? "write"
                                       : "read")
           << " " << toString(A.Space) << " " << A.Base << "[" << A.Index
           << "] line " << A.Pos.Line << ": " << toString(A.Pattern);
        if (A.Pattern == Coalescing::Strided && A.Stride)
          OS << " (stride " << *A.Stride << ")";
        if (A.Indirect)
          OS << ", indirect";
        if (!A.Through.empty())
          OS << ", pointer read from " << A.Through;
        OS << "\n";
      }
    }
    for (const SharedDecl &S : K.Shared) {
      OS << "  shared " << S.Type << " " << S.Name;
      if (S.Bytes)
        OS << " (" << *S.Bytes << " B)";
      if (S.Dynamic)
        OS << " (dynamic)";
      OS << "\n";
    }
    auto List = [&](StringRef What, const std::vector<CallSite> &Calls) {
      if (Calls.empty())
        return;
      OS << "  " << What << ": ";
      for (size_t I = 0; I < Calls.size(); ++I)
        OS << (I ? ", " : "") << Calls[I].Name << " (line " << Calls[I].Pos.Line
           << ")";
      OS << "\n";
    };
    List("__syncthreads", K.Syncthreads);
    List("atomics", K.Atomics);
    List("math", K.MathCalls);
    List("warp primitives", K.WarpPrimitives);
    List("calls", K.DeviceCalls);
  }
}

} // namespace optiml
