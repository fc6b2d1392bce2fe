//===- BuildFlags.cpp - One set of flags for the parse and the build ------===//

#include "optiml/Eval/BuildFlags.h"
#include "optiml/Eval/Builder.h"
#include "clang/Options/Options.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <optional>

using namespace llvm;

namespace optiml {

namespace {

/// \p Path against \p Dir, lexically ("inc/../x" is "x"); an absolute path
/// or an empty \p Dir leaves it as it is.
std::string absoluteIn(StringRef Path, StringRef Dir) {
  if (Path.empty() || Dir.empty() || sys::path::is_absolute(Path))
    return Path.str();
  SmallString<256> Abs(Dir);
  sys::path::append(Abs, Path);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  return std::string(Abs);
}

/// An -include file relative to \p Dir if it is there; else, as the
/// preprocessor does, it is looked for on the include path, so the name is
/// left alone.
std::string includeFileIn(StringRef Path, StringRef Dir) {
  std::string Abs = absoluteIn(Path, Dir);
  if (Abs != Path && !sys::fs::exists(Abs))
    return Path.str();
  return Abs;
}

enum class PathKind {
  Directory,
  IncludeFile, ///< -include: only if it exists relative to the directory
  File,
  Program, ///< -ccbin: a path only when it holds a '/'
};

struct NvccPathOption {
  StringRef Short, Long;
  bool Joined; ///< nvcc also takes `-Xvalue` (the one-letter options)
  PathKind Kind;
};

// nvcc's options whose values are paths (nvcc --help): every other option
// names no file, or (-o, -odir, -MF) names an output, which the builder
// chooses itself.
const NvccPathOption PathOptions[] = {
    {"-I", "--include-path", true, PathKind::Directory},
    {"-isystem", "--system-include", false, PathKind::Directory},
    {"-L", "--library-path", true, PathKind::Directory},
    {"-include", "--pre-include", false, PathKind::IncludeFile},
    {"-optf", "--options-file", false, PathKind::File},
    {"-ccbin", "--compiler-bindir", false, PathKind::Program},
};

/// Options whose value goes to another program as written: what it means
/// there is that program's business.
const char *const PassThroughOptions[] = {
    "-Xcompiler", "--compiler-options", "-Xlinker", "--linker-options",
    "-Xptxas",    "--ptxas-options",    "-Xnvlink", "--nvlink-options",
    "-Xarchive",  "--archive-options",  "-Xfatbin", "--fatbin-options"};

std::string resolveOne(StringRef V, PathKind K, StringRef Dir) {
  switch (K) {
  case PathKind::IncludeFile:
    return includeFileIn(V, Dir);
  case PathKind::Program:
    return V.contains('/') ? absoluteIn(V, Dir) : V.str();
  case PathKind::Directory:
  case PathKind::File:
    return absoluteIn(V, Dir);
  }
  return V.str();
}

/// nvcc splits path values at commas: each element on its own.
std::string resolveList(StringRef V, PathKind K, StringRef Dir) {
  SmallVector<StringRef, 4> Parts;
  V.split(Parts, ',');
  std::string Out;
  for (size_t I = 0; I < Parts.size(); ++I) {
    if (I)
      Out += ',';
    Out += Parts[I].empty() ? std::string() : resolveOne(Parts[I], K, Dir);
  }
  return Out;
}

/// nvcc's C++ dialect for clang's -std value (nvcc takes c++03 to c++20);
/// nullopt when nvcc has none.
std::optional<std::string> nvccDialect(StringRef V) {
  StringRef Year = V;
  if (!Year.consume_front("c++") && !Year.consume_front("gnu++"))
    return std::nullopt;
  static const std::pair<StringRef, StringRef> Years[] = {
      {"98", "c++03"}, {"03", "c++03"}, {"11", "c++11"}, {"0x", "c++11"},
      {"14", "c++14"}, {"1y", "c++14"}, {"17", "c++17"}, {"1z", "c++17"},
      {"20", "c++20"}, {"2a", "c++20"}};
  for (const auto &[Y, Dialect] : Years)
    if (Year == Y)
      return Dialect.str();
  return std::nullopt;
}

} // namespace

NvccFlagList resolveNvccPaths(ArrayRef<std::string> Flags,
                              StringRef Directory) {
  NvccFlagList Out;
  auto Resolved = [&](StringRef From, std::string To) {
    if (From != To)
      Out.Notes.push_back((From + " -> " + To).str());
    Out.Flags.push_back(std::move(To));
  };
  for (size_t I = 0; I < Flags.size(); ++I) {
    StringRef A = Flags[I];
    if (is_contained(PassThroughOptions, A)) {
      Out.Flags.push_back(A.str());
      if (I + 1 < Flags.size())
        Out.Flags.push_back(Flags[++I]);
      continue;
    }
    bool Done = false;
    for (const NvccPathOption &O : PathOptions) {
      for (StringRef Name : {O.Short, O.Long}) {
        if (A == Name) { // `-I dir`
          Out.Flags.push_back(A.str());
          if (I + 1 < Flags.size()) {
            StringRef V = Flags[++I];
            std::string R = resolveList(V, O.Kind, Directory);
            if (R != V)
              Out.Notes.push_back((A + " " + V + " -> " + A + " " + R).str());
            Out.Flags.push_back(std::move(R));
          }
          Done = true;
        } else if (A.starts_with(Name) &&
                   A.drop_front(Name.size()).starts_with("=")) { // `-I=dir`
          Resolved(
              A, (Name + "=" +
                  resolveList(A.drop_front(Name.size() + 1), O.Kind, Directory))
                     .str());
          Done = true;
        }
        if (Done)
          break;
      }
      if (!Done && O.Joined && A.size() > O.Short.size() &&
          A.starts_with(O.Short)) { // `-Idir`
        Resolved(A, (O.Short + resolveList(A.drop_front(O.Short.size()), O.Kind,
                                           Directory))
                        .str());
        Done = true;
      }
      if (Done)
        break;
    }
    if (!Done)
      Out.Flags.push_back(A.str());
  }
  return Out;
}

NvccFlagList nvccCommandFlags(ArrayRef<std::string> Argv, StringRef Directory,
                              StringRef File) {
  std::vector<std::string> Kept;
  std::vector<std::string> Notes;
  StringRef FileName = sys::path::filename(File);
  // nvcc's -x sets the language of every input after it; a build adds
  // inputs (the program's other sources, libraries), which must keep their
  // own. A .cu file is CUDA without it.
  bool DropLanguage = File.ends_with(".cu");
  // Options whose value is the next argument and that are dropped with it.
  static const char *const DropWithValue[] = {
      "-o",  "--output-file",       "-MF",   "-MT",
      "-MQ", "--dependency-output", "-odir", "--output-directory"};
  for (size_t I = 1; I < Argv.size(); ++I) {
    StringRef A = Argv[I];
    if (is_contained(DropWithValue, A)) {
      ++I;
      continue;
    }
    if (DropLanguage && (A == "-x" || A == "--x") && I + 1 < Argv.size() &&
        Argv[I + 1] == "cu") {
      Notes.push_back(A.str() + " cu: not passed (the source is a .cu file; "
                                "the build's other inputs keep their "
                                "language)");
      ++I;
      continue;
    }
    if (DropLanguage && (A == "-x=cu" || A == "--x=cu" || A == "-xcu")) {
      Notes.push_back(A.str() + ": not passed (the source is a .cu file; the "
                                "build's other inputs keep their language)");
      continue;
    }
    if (A == "-c" || A == "--compile" || A == "-M" || A == "-MD" ||
        A == "-MMD" || A == "--generate-dependencies" ||
        A.starts_with("--generate-dependencies-with-compile") ||
        A.starts_with("-o=") || A.starts_with("--output-file=") ||
        A.starts_with("-odir=") || A.starts_with("--output-directory=") ||
        A.starts_with("-MF=") || A.starts_with("--dependency-output="))
      continue;
    // The source file (as written, relative or absolute).
    if (!A.starts_with("-") &&
        (sys::path::filename(A) == FileName || A.ends_with(".cu") ||
         A.ends_with(".cpp") || A.ends_with(".cc") || A.ends_with(".cxx") ||
         A.ends_with(".c")))
      continue;
    // A pass-through option's value is kept whatever it looks like.
    Kept.push_back(A.str());
    if (is_contained(PassThroughOptions, A) && I + 1 < Argv.size())
      Kept.push_back(Argv[++I]);
  }
  NvccFlagList Out = resolveNvccPaths(Kept, Directory);
  Out.Notes.insert(Out.Notes.begin(), Notes.begin(), Notes.end());
  return Out;
}

NvccFlagList clangArgsForNvcc(ArrayRef<std::string> Args, StringRef Directory) {
  namespace co = clang::options;
  NvccFlagList Out;
  std::vector<const char *> Argv;
  for (const std::string &A : Args)
    Argv.push_back(A.c_str());
  unsigned MissingIndex = 0, MissingCount = 0;
  opt::InputArgList List = clang::getDriverOptTable().ParseArgs(
      Argv, MissingIndex, MissingCount, opt::Visibility(co::ClangOption));
  if (MissingCount)
    Out.Notes.push_back(std::string(Argv[MissingIndex]) +
                        ": not passed (its value is missing)");

  // The flag as the user wrote it (`-Iinc` or `-I inc`), for the notes.
  auto AsWritten = [&](const opt::Arg *A) {
    std::string S = List.getArgString(A->getIndex());
    if (S == A->getSpelling() && !A->getOption().matches(co::OPT_UNKNOWN))
      for (unsigned I = 1; I <= A->getNumValues(); ++I)
        if (const char *V = List.getArgString(A->getIndex() + I))
          S += std::string(" ") + V;
    return S;
  };
  auto NotPassed = [&](const opt::Arg *A, StringRef Why) {
    Out.Notes.push_back(AsWritten(A) + ": not passed (" + Why.str() + ")");
  };
  auto Passed = [&](const opt::Arg *A, ArrayRef<std::string> Flags) {
    std::string From = AsWritten(A), To = join(Flags, " ");
    if (From != To)
      Out.Notes.push_back(From + " -> " + To);
    Out.Flags.insert(Out.Flags.end(), Flags.begin(), Flags.end());
  };
  for (const opt::Arg *A : List) {
    const opt::Option &O = A->getOption();
    if (O.matches(co::OPT_INPUT))
      continue; // the source file of a compile command
    if (O.matches(co::OPT_UNKNOWN)) {
      NotPassed(A, "not a clang option");
      continue;
    }
    bool IsPath = O.matches(co::OPT_I) || O.matches(co::OPT_isystem) ||
                  O.matches(co::OPT_include);
    bool IsMacro = O.matches(co::OPT_D) || O.matches(co::OPT_U);
    if (IsPath || IsMacro) {
      StringRef V = A->getValue();
      if (V.contains(',')) {
        NotPassed(A, "nvcc splits option values at commas");
        continue;
      }
      if (O.matches(co::OPT_I)) {
        if (V.starts_with("=")) {
          NotPassed(A, "relative to a sysroot, which nvcc does not have");
          continue;
        }
        Passed(A, {"-I" + absoluteIn(V, Directory)});
      } else if (O.matches(co::OPT_isystem)) {
        Passed(A, {"-isystem", absoluteIn(V, Directory)});
      } else if (O.matches(co::OPT_include)) {
        Passed(A, {"-include", includeFileIn(V, Directory)});
      } else {
        Passed(A, {(O.matches(co::OPT_D) ? "-D" : "-U") + V.str()});
      }
      continue;
    }
    if (O.matches(co::OPT_std_EQ)) {
      if (auto D = nvccDialect(A->getValue()))
        Passed(A, {"-std=" + *D});
      else
        NotPassed(A, "nvcc knows the dialects c++03 to c++20");
      continue;
    }
    if (O.matches(co::OPT_iquote) || O.matches(co::OPT_idirafter)) {
      NotPassed(A, "nvcc has no such option; --build-arg=-I<dir> is the "
                   "nearest");
      continue;
    }
    NotPassed(A, "only -I, -isystem, -include, -D, -U and -std go to nvcc");
  }
  return Out;
}

Expected<ProgramBuildFlags> programBuildFlags(const TranslatedFlags &Db,
                                              ArrayRef<std::string> ClangArgs,
                                              ArrayRef<std::string> BuildArgs,
                                              StringRef Cwd, StringRef File) {
  ProgramBuildFlags P;
  // Each note names where the flag came from; each refusal too.
  auto Take = [&](NvccFlagList L, std::vector<std::string> &Into,
                  StringRef Where, StringRef What) -> Error {
    for (const std::string &N : L.Notes)
      P.Notes.push_back((Where + ": " + N).str());
    for (const std::string &F : L.Flags)
      if (Error E = checkNvccArgument(F, What))
        return E;
    Into.insert(Into.end(), L.Flags.begin(), L.Flags.end());
    return Error::success();
  };
  if (!Db.Original.empty()) {
    StringRef Where = "compilation database";
    StringRef What = "the compilation database's flag";
    if (sys::path::filename(Db.Original.front()).contains("nvcc")) {
      // Written for nvcc: kept as written, nvcc running where it ran.
      if (Error E = Take(nvccCommandFlags(Db.Original, Db.Directory, File),
                         P.Flags, Where, What))
        return std::move(E);
      P.WorkDir = Db.Directory;
    } else if (Error E =
                   Take(clangArgsForNvcc(ArrayRef(Db.Original).drop_front(),
                                         Db.Directory),
                        P.ExtraFlags, Where, What)) {
      return std::move(E);
    }
  }
  if (Error E = Take(clangArgsForNvcc(ClangArgs, Cwd), P.ExtraFlags, "after --",
                     "the argument after --"))
    return std::move(E);
  if (Error E = Take(resolveNvccPaths(BuildArgs, Cwd), P.ExtraFlags,
                     "--build-arg", "--build-arg"))
    return std::move(E);
  return P;
}

Error requireMain(StringRef File, bool DefinesMain, bool HasKernels,
                  bool HasSources) {
  if (DefinesMain || HasSources)
    return Error::success();
  if (!HasKernels)
    return createStringError(
        inconvertibleErrorCode(),
        "'%s' defines no main(): a whole program is built and run; give the "
        "file with main() (and the program's other files with --source)",
        File.str().c_str());
  return createStringError(
      inconvertibleErrorCode(),
      "'%s' defines kernels but no main(): a whole program is built and run; "
      "if another file #includes this one, give that file instead; if this "
      "one is compiled on its own, add the file with main() with --source "
      "(e.g. --source main.cu)",
      File.str().c_str());
}

} // namespace optiml
