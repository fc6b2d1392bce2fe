//===- Program.cpp - The program a driver builds, runs and writes ---------===//

#include "optiml/Driver/Program.h"
#include "optiml/Edit/Diff.h"
#include "optiml/Eval/BuildFlags.h"
#include "optiml/Eval/Builder.h"
#include "optiml/Eval/Runner.h"
#include "optiml/Frontend/MainFunction.h"
#include "optiml/Support/FileUtil.h"
#ifdef OPTIML_WITH_LLM
#include "optiml/LLM/ChatClient.h"
#include "optiml/LLM/HttpTransport.h"
#include "optiml/LLM/LLMConfig.h"
#endif
#include "clang/Frontend/ASTUnit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

namespace optiml {

std::string absolutePath(StringRef Path) {
  if (Path.empty())
    return "";
  SmallString<256> Abs(Path);
  // make_absolute only fails when the current directory is unknown; the
  // path is then kept as given and the first use of it says why.
  (void)sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/false);
  return std::string(Abs);
}

std::string projectRoot(StringRef AbsFile) {
  StringRef Dir = sys::path::parent_path(AbsFile);
  for (StringRef D = Dir; !D.empty(); D = sys::path::parent_path(D)) {
    SmallString<256> Git(D);
    sys::path::append(Git, ".git");
    if (sys::fs::exists(Git))
      return D.str();
  }
  return Dir.str();
}

std::string projectRelativeDiff(StringRef Diff, StringRef AbsFile) {
  std::string Root = projectRoot(AbsFile);
  SmallString<256> Rel(AbsFile);
  if (!sys::path::replace_path_prefix(Rel, Root, ""))
    return Diff.str();
  StringRef R = sys::path::relative_path(Rel);
  std::string RelPosix = sys::path::convert_to_slash(R);
  // The library's headers are the first two lines.
  StringRef Rest = Diff;
  if (!Rest.consume_front("--- "))
    return Diff.str();
  Rest = Rest.split('\n').second;
  if (!Rest.consume_front("+++ "))
    return Diff.str();
  Rest = Rest.split('\n').second;
  return "--- a/" + RelPosix + "\n+++ b/" + RelPosix + "\n" + Rest.str();
}

Expected<std::string> outputPathFor(StringRef Out, StringRef Main,
                                    StringRef Changed) {
  bool IsDir = sys::fs::is_directory(Out) ||
               (!Out.empty() && sys::path::is_separator(Out.back()));
  std::string AbsMain = absolutePath(Main);
  if (!IsDir) {
    if (absolutePath(Changed) == AbsMain)
      return Out.str();
    return createStringError(
        inconvertibleErrorCode(),
        "the edit rewrites '%s', which '%s' includes, not '%s' itself: -o "
        "names one file; give -o a directory (e.g. -o out/) to write the "
        "changed file there under its name, or use --export-fixes or --diff",
        Changed.str().c_str(), sys::path::filename(Main).str().c_str(),
        sys::path::filename(Main).str().c_str());
  }
  SmallString<256> Rel(absolutePath(Changed));
  if (!sys::path::replace_path_prefix(Rel, sys::path::parent_path(AbsMain),
                                      "") ||
      Rel.empty())
    return createStringError(
        inconvertibleErrorCode(),
        "the edit rewrites '%s', outside the directory of '%s'; -o DIR "
        "keeps paths relative to that directory: use --export-fixes or "
        "--diff",
        Changed.str().c_str(), Main.str().c_str());
  SmallString<256> Dest(absolutePath(Out));
  sys::path::append(Dest, sys::path::relative_path(Rel));
  if (std::error_code EC =
          sys::fs::create_directories(sys::path::parent_path(Dest)))
    return createStringError(EC, "cannot create '%s': %s",
                             sys::path::parent_path(Dest).str().c_str(),
                             EC.message().c_str());
  return std::string(Dest);
}

Error exportFixes(StringRef YamlPath, StringRef AbsFile, StringRef Old,
                  StringRef New, StringRef Message) {
  std::string Path = absolutePath(YamlPath);
  if (sys::fs::equivalent(Path, AbsFile))
    return createStringError(inconvertibleErrorCode(),
                             "--export-fixes '%s' is the source file itself; "
                             "name a .yaml file",
                             YamlPath.str().c_str());
  auto Yaml = fixesYAML(AbsFile, Old, New, "clang-optiml-edit", Message);
  if (!Yaml)
    return Yaml.takeError();
  return writeFileAtomically(Path, *Yaml);
}

Error checkNvccFlags(ArrayRef<std::string> Flags, StringRef Option) {
  for (const std::string &F : Flags)
    if (Error E = checkNvccArgument(F, Option))
      return E;
  return Error::success();
}

Expected<std::vector<std::string>>
programSources(const std::vector<std::string> &Paths) {
  std::vector<std::string> Out;
  for (const std::string &P : Paths) {
    if (!sys::fs::is_regular_file(P))
      return createStringError(inconvertibleErrorCode(),
                               "--source '%s': no such file", P.c_str());
    SmallString<256> Abs(P);
    if (std::error_code EC = sys::fs::make_absolute(Abs))
      return createStringError(EC, "--source '%s': %s", P.c_str(),
                               EC.message().c_str());
    sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
    Out.push_back(std::string(Abs));
  }
  return Out;
}

Error setProgramBuildFlags(BuildOptions &BO, const AnalyzeOptions &AO,
                           StringRef File, ArrayRef<std::string> BuildArgs,
                           raw_ostream *Log) {
  // The entry the parse uses (for a file without one, its neighbour's).
  auto Db = AO.BuildDir.empty() ? discoverCompileFlags(File)
                                : loadCompileFlags(AO.BuildDir, File);
  if (!Db)
    return Db.takeError();
  SmallString<256> Cwd;
  if (std::error_code EC = sys::fs::current_path(Cwd))
    return createStringError(EC, "cannot tell the current directory: %s",
                             EC.message().c_str());
  auto P =
      programBuildFlags(*Db, AO.ExtraArgs, BuildArgs, Cwd, absolutePath(File));
  if (!P)
    return P.takeError();
  if (Log) {
    if (!Db->Database.empty())
      WithColor::note(*Log, "clang-optiml")
          << "nvcc build: flags from " << Db->Database
          << (P->WorkDir.empty() ? "" : ", run in " + P->WorkDir) << "\n";
    for (const std::string &N : P->Notes)
      WithColor::note(*Log, "clang-optiml") << "nvcc build: " << N << "\n";
  }
  BO.Flags = std::move(P->Flags);
  BO.ExtraFlags = std::move(P->ExtraFlags);
  BO.WorkDir = std::move(P->WorkDir);
  return Error::success();
}

void noteBuilder(const Builder &B, raw_ostream *Log) {
  if (!Log)
    return;
  *Log << "nvcc: " << B.nvccPath() << "\n  flags:";
  for (const std::string &F : B.flags())
    *Log << " " << F;
  *Log << "\n";
}

Error requireProgram(StringRef File, const Analysis &A,
                     ArrayRef<std::string> Sources) {
  return requireMain(File, definesMain(A.TU.AST->getASTContext()),
                     !A.Model.Kernels.empty(), !Sources.empty());
}

std::string findProbeLibrary(const char *Argv0, StringRef Explicit) {
  // The program loads it (CUDA_INJECTION64_PATH) from its own directory.
  if (!Explicit.empty())
    return absolutePath(Explicit);
  if (auto P = sys::Process::GetEnv("OPTIML_PROBE"); P && !P->empty())
    return absolutePath(*P);
  std::string Exe = sys::fs::getMainExecutable(
      Argv0, reinterpret_cast<void *>(&findProbeLibrary));
  if (Exe.empty())
    return "";
  SmallString<256> P(sys::path::parent_path(sys::path::parent_path(Exe)));
  sys::path::append(P, "lib", "liboptiml-probe.so");
  return std::string(P);
}

Error setProgramRun(RunnerOptions &R, const std::vector<std::string> &Args,
                    StringRef WorkDir, raw_ostream *Log) {
  if (!WorkDir.empty()) {
    if (!sys::fs::is_directory(WorkDir))
      return createStringError(inconvertibleErrorCode(),
                               "--workdir '%s' is not a directory",
                               WorkDir.str().c_str());
    SmallString<256> Abs(WorkDir);
    if (std::error_code EC = sys::fs::make_absolute(Abs))
      return createStringError(EC, "--workdir '%s': %s", WorkDir.str().c_str(),
                               EC.message().c_str());
    R.ProgramWorkDir = std::string(Abs);
    R.ProgramArgs = Args;
    return Error::success();
  }
  SmallString<256> Cwd;
  if (sys::fs::current_path(Cwd)) {
    R.ProgramArgs = Args;
    return Error::success();
  }
  std::vector<std::string> Notes;
  R.ProgramArgs = resolveProgramArgs(Args, Cwd, &Notes);
  if (Log)
    for (const std::string &N : Notes)
      WithColor::note(*Log, "clang-optiml") << N << "\n";
  return Error::success();
}

#ifdef OPTIML_WITH_LLM
Expected<std::optional<LLMSetup>> configureLLM(const llm::LLMSettings &Explicit,
                                               StringRef SourcePath,
                                               StringRef RequiredBy,
                                               raw_ostream *Log) {
  bool Required = !RequiredBy.empty();
  // The project's config: next to the source or above it, up to the
  // project root; never the current directory's.
  SmallString<256> SourceDir(SourcePath);
  (void)sys::fs::make_absolute(SourceDir);
  sys::path::remove_filename(SourceDir);
  auto Project =
      llm::findProjectLLM(Explicit, SourceDir, llm::processEnvironment());
  if (!Project)
    return Project.takeError();
  if (!Required && !Project->Configured)
    return std::nullopt;
  auto Config = llm::loadLLMConfig(Explicit, Project->File);
  if (!Config)
    return createStringError(
        (Required ? RequiredBy + " needs an LLM: "
                  : "the LLM configured by " + Project->EnabledBy +
                        " cannot be used: ") +
        toString(Config.takeError()) + " (see docs/llm.md)");
  LLMSetup S;
  raw_string_ostream D(S.Description);
  D << "model '" << Config->Model << "' at " << llm::urlHost(Config->BaseURL)
    << (StringRef(Config->BaseURL).starts_with("https://") ? "" : " (http)")
    << (Config->APIKey.empty() ? ", no key" : ", key from " + Config->APIKeyEnv)
    << (Required ? ", " + RequiredBy.str()
                 : ", enabled by " + Project->EnabledBy)
    << (Project->ConfigPath ? "; config " + *Project->ConfigPath
                            : std::string());
  S.Client = std::make_unique<llm::ChatClient>(
      std::move(*Config),
      std::shared_ptr<llm::HttpTransport>(llm::createCurlTransport()));
  if (Log)
    S.Client->setLogger([Log](StringRef L) { *Log << "llm: " << L << "\n"; });
  return std::optional<LLMSetup>(std::move(S));
}

LLMSetup::LLMSetup() = default;
LLMSetup::LLMSetup(LLMSetup &&) = default;
LLMSetup::~LLMSetup() = default;
#endif

} // namespace optiml
