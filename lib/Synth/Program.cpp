//===- Program.cpp - The program every class shares -----------------------===//
//
// Everything but the kernels: the header comment, the input generator, the
// command line, the device buffers, the reference call and the check. The
// text is assembled from templates with named placeholders (fillTemplate).
//
//===----------------------------------------------------------------------===//

#include "TemplatesInternal.h"
#include "optiml/Eval/Builder.h"
#include "optiml/Synth/Templates.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <tuple>

using namespace llvm;

namespace optiml {
namespace synth {

/// Text safe in a // comment: one line, no backslash (which would continue
/// the comment onto the next line).
static std::string commentText(StringRef Text) {
  std::string Out;
  for (char C : Text) {
    if (C == '\n' || C == '\r' || C == '\t')
      Out += ' ';
    else if (C == '\\')
      Out += '/';
    else if (static_cast<unsigned char>(C) >= 0x20)
      Out += C;
  }
  return StringRef(Out).rtrim().str();
}

static std::string number(double V) {
  std::string S;
  raw_string_ostream(S) << format("%.6g", V);
  return S;
}

/// The element count of \p T as a size_t expression.
static std::string hostCount(const Tensor &T) {
  if (T.Shape.empty())
    return "(size_t)1";
  std::string E = "(size_t)";
  for (size_t I = 0; I < T.Shape.size(); ++I)
    E += (I ? " * " : "") + dimRef(T.Shape[I]);
  return E;
}

static const char *const Prelude = R"(#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>
#include <cuda_runtime.h>

#define OPTIML_CHECK(call)                                                     \
  do {                                                                         \
    cudaError_t optiml_err = (call);                                           \
    if (optiml_err != cudaSuccess) {                                           \
      fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__,           \
              cudaGetErrorString(optiml_err));                                 \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

// Deterministic inputs: xorshift64*, one stream per input, from the seed.
struct OptimlRng {
  unsigned long long state;
  OptimlRng(unsigned seed, unsigned stream)
      : state(0x9E3779B97F4A7C15ull * (seed + 1ull) ^
              0xD1B54A32D192ED03ull * (stream + 1ull)) {
    if (!state)
      state = 1;
  }
  unsigned long long next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 2685821657736338717ull;
  }
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
};

// Values in [lo, hi): integers lo..hi-1.
template <class T>
static void optimlFill(std::vector<T> &values, unsigned seed, unsigned stream,
                       double lo, double hi) {
  OptimlRng rng(seed, stream);
  for (T &v : values) {
    double u = rng.uniform();
    v = std::is_integral<T>::value ? (T)(lo + std::floor(u * (hi - lo)))
                                   : (T)(lo + u * (hi - lo));
  }
}

// Every element within abs + rel * |want| (integers exactly); says how many
// differ and where the first is.
template <class T>
static bool optimlCompare(const char *name, const std::vector<T> &got,
                          const std::vector<T> &want, double abs_tol,
                          double rel_tol) {
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = (double)got[i], w = (double)want[i], err = std::fabs(g - w);
    bool ok = std::is_integral<T>::value ? got[i] == want[i]
                                         : err <= abs_tol + rel_tol * std::fabs(w);
    if (!ok && bad++ == 0)
      first = i;
    if (!(err <= worst))
      worst = err;
  }
  if (bad)
    printf("optiml-synth: %s: %zu of %zu elements differ from the reference; "
           "first at [%zu]: got %.9g, want %.9g\n",
           name, bad, got.size(), first, (double)got[first],
           (double)want[first]);
  else
    printf("optiml-synth: %s: %zu elements match the reference (max error "
           "%.3g)\n",
           name, got.size(), worst);
  return bad == 0;
}

// Reads "name=value" into *value when arg names it; a bad value ends the
// program.
static bool optimlArg(const char *arg, const char *name, long long lo,
                      long long hi, long long *value) {
  size_t len = strlen(name);
  if (strncmp(arg, name, len) != 0 || arg[len] != '=')
    return false;
  char *end = nullptr;
  long long v = strtoll(arg + len + 1, &end, 10);
  if (end == arg + len + 1 || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "optiml-synth: bad argument '%s' (an integer from %lld to %lld)\n",
            arg, lo, hi);
    exit(2);
  }
  *value = v;
  return true;
}
)";

std::string generateProgram(const Spec &S, const ProgramOptions &Opts) {
  return generateProgram(S, Opts, templateCode(S));
}

ProgramLayout programLayout(const Spec &S, const ProgramOptions &Opts,
                            const KernelCode &Code) {
  // Markers no spec text can hold (a NUL byte), found and taken out.
  KernelCode Marked = Code;
  Marked.Kernels = std::string("\0K", 2);
  Marked.Launch = std::string("\0L", 2);
  std::string Text = generateProgram(S, Opts, Marked);
  ProgramLayout L;
  size_t K = Text.find(Marked.Kernels), Lz = Text.find(Marked.Launch);
  assert(K != std::string::npos && Lz != std::string::npos && K < Lz);
  L.KernelsAt = K;
  L.LaunchAt = Lz - 2;
  L.Skeleton =
      Text.substr(0, K) + Text.substr(K + 2, Lz - K - 2) + Text.substr(Lz + 2);
  return L;
}

/// The program's opening comment: what it computes, where it came from, its
/// status lines and how to run it.
static std::string programHeader(const Spec &S, StringRef ProgName,
                                 const KernelCode &Code,
                                 ArrayRef<std::string> Status,
                                 StringRef Usage) {
  std::string Header;
  raw_string_ostream H(Header);
  H << "// " << commentText(ProgName) << ": " << commentText(Code.Title)
    << ".\n//\n"
    << "// Written by clang-optiml synthesize from " << commentText(S.Path)
    << " (class " << className(S.Class)
    << (S.ClassInferred ? ", inferred from the request" : "") << ").\n";
  if (!S.Request.empty())
    H << "// Request: " << commentText(S.Request) << "\n";
  for (const std::string &L : Status)
    H << "// " << commentText(L) << "\n";
  H << "//\n// Usage: ./" << commentText(sys::path::stem(ProgName)) << Usage
    << " [seed=S] [check=0]\n"
    << "//   Sizes default to the spec's; the inputs are drawn from the seed "
       "(default "
    << S.Seed << ").\n"
    << "//   The outputs are checked against the spec's reference on the "
       "host (check=0\n"
    << "//   skips that). Exit status: 0 they match, 1 they do not, 2 a "
       "CUDA error or a\n"
    << "//   bad argument.\n";
  return Header;
}

std::string generateProgram(const Spec &S, const ProgramOptions &Opts,
                            const KernelCode &Code) {
  Tolerance Tol = effectiveTolerance(S);
  bool HasFile = !Opts.FileName.empty() && Opts.FileName != "-";
  std::string Prog = HasFile ? Opts.FileName : kernelName(S) + ".cu";
  // Every program has a status (the header's lines between "Written by"
  // and "Usage"), so that setProgramStatus can replace it.
  std::vector<std::string> Status = Opts.Status;
  if (Status.empty())
    Status.push_back("Status: not verified yet.");
  std::string ProgName = sys::path::filename(Prog).str();

  auto Append = [](std::string &To, const std::string &P) {
    To += (To.empty() ? "" : ", ") + P;
  };
  // Pieces that list every dimension, input or output.
  std::string Usage, SizeFormat, SizeArgs, DimParams, IntDims, ParseArgs,
      DimDecls;
  for (const auto &[Name, Value] : S.Sizes) {
    Usage += " [" + Name + "=N]";
    SizeFormat += " " + Name + "=%d";
    SizeArgs += ", (int)" + Name;
    DimParams += ", int " + Name;
    IntDims += ", (int)" + Name;
    DimDecls += "  long long " + Name + " = " + std::to_string(Value) + ";\n";
    ParseArgs += "optimlArg(argv[i], \"" + Name + "\", 1, INT_MAX, &" + Name +
                 ") ||\n        ";
  }
  std::string DeviceParams, DeviceArgs, RefArgs, HostArrays, Buffers, CopyIn,
      CopyOut, Free, RefDecls, Compares, CountChecks;
  unsigned Stream = 0;
  for (const Tensor &T : S.Inputs) {
    std::string Ty = elementTypeName(T.Type).str(), N = T.Name;
    Append(DeviceParams, "const " + Ty + " *h_" + N);
    Append(DeviceArgs, "h_" + N + ".data()");
    Append(RefArgs, "h_" + N + ".data()");
    std::string Lo = "0", Hi = isFloating(T.Type) ? "1" : "100";
    if (T.Range) {
      Lo = number(T.Range->first);
      Hi = number(T.Range->second);
    }
    for (const auto &[Name, Bounds] : Code.Ranges)
      if (Name == N)
        std::tie(Lo, Hi) = Bounds;
    HostArrays += "  std::vector<" + Ty + "> h_" + N + "(" + hostCount(T) +
                  ");\n  optimlFill(h_" + N + ", (unsigned)seed, " +
                  std::to_string(Stream++) + ", " + Lo + ", " + Hi + ");\n";
    Buffers += "  " + Ty + " *d_" + N +
               " = nullptr;\n  OPTIML_CHECK(cudaMalloc(&d_" + N + ", sizeof(" +
               Ty + ") * " + hostCount(T) + "));\n";
    CopyIn += "  OPTIML_CHECK(cudaMemcpy(d_" + N + ", h_" + N + ", sizeof(" +
              Ty + ") * " + hostCount(T) + ", cudaMemcpyHostToDevice));\n";
    Free += "  OPTIML_CHECK(cudaFree(d_" + N + "));\n";
  }
  for (const Tensor &T : S.Outputs) {
    std::string Ty = elementTypeName(T.Type).str(), N = T.Name;
    Append(DeviceParams, Ty + " *h_" + N);
    Append(DeviceArgs, "h_" + N + ".data()");
    Append(RefArgs, "ref_" + N + ".data()");
    HostArrays +=
        "  std::vector<" + Ty + "> h_" + N + "(" + hostCount(T) + ");\n";
    Buffers += "  " + Ty + " *d_" + N +
               " = nullptr;\n  OPTIML_CHECK(cudaMalloc(&d_" + N + ", sizeof(" +
               Ty + ") * " + hostCount(T) + "));\n";
    CopyIn += "  OPTIML_CHECK(cudaMemset(d_" + N + ", 0, sizeof(" + Ty +
              ") * " + hostCount(T) + "));\n";
    CopyOut += "  OPTIML_CHECK(cudaMemcpy(h_" + N + ", d_" + N + ", sizeof(" +
               Ty + ") * " + hostCount(T) + ", cudaMemcpyDeviceToHost));\n";
    Free += "  OPTIML_CHECK(cudaFree(d_" + N + "));\n";
    RefDecls +=
        "  std::vector<" + Ty + "> ref_" + N + "(h_" + N + ".size());\n";
    Compares += "  ok = optimlCompare(\"" + N + "\", h_" + N + ", ref_" + N +
                ", abs_tol, rel_tol) && ok;\n";
  }
  // The kernels index with int: refuse sizes whose element counts do not
  // fit.
  std::vector<std::string> Counted;
  for (const auto *List : {&S.Inputs, &S.Outputs})
    for (const Tensor &T : *List)
      if (T.Shape.size() > 1 && !is_contained(Counted, hostCount(T)) &&
          (Counted.push_back(hostCount(T)), true))
        CountChecks +=
            "  if ((double)" + hostCount(T).substr(8) +
            " > INT_MAX) {\n    fprintf(stderr, \"optiml-synth: " + T.Name +
            " has more than INT_MAX elements; the kernels index "
            "with int\\n\");\n    return 2;\n  }\n";
  std::string SpecSizes;
  for (const auto &[Name, Value] : S.Sizes)
    SpecSizes += (SpecSizes.empty() ? "" : " && ") + Name +
                 " == " + std::to_string(Value);
  if (SpecSizes.empty())
    SpecSizes = "true";
  // The tests' stand-in for the GPU: the reference's own outputs, one
  // element of the first output made wrong when asked.
  const Tensor &First = S.Outputs.front();
  std::string TestOutputs = fillTemplate(
      R"(  // Built for the tool's tests, without a GPU: the outputs are the
  // reference's own, and with OPTIML_SYNTH_TEST_OUTPUTS=1 (or
  // OPTIML_SYNTH_CORRUPT=1 in the environment) one element is made wrong,
  // which the check below must catch; =2 makes it wrong at every seed but
  // the spec's (as hard-coded answers would be), =3 at every size but the
  // spec's (as a program written for one size would be).
  reference(${Args}${IntDims});
  if (OPTIML_SYNTH_TEST_OUTPUTS == 1 || getenv("OPTIML_SYNTH_CORRUPT") ||
      (OPTIML_SYNTH_TEST_OUTPUTS == 2 && seed != ${Seed}) ||
      (OPTIML_SYNTH_TEST_OUTPUTS == 3 && !(${SpecSizes}))) {
    ${Ty} &v = h_${N}[h_${N}.size() / 2];
    v = (${Ty})(v + 1 + std::fabs((double)v));
  }
)",
      {{"Args", DeviceArgs},
       {"IntDims", IntDims},
       {"Seed", std::to_string(S.Seed)},
       {"SpecSizes", SpecSizes},
       {"Ty", elementTypeName(First.Type).str()},
       {"N", First.Name}});

  std::string Header = programHeader(S, ProgName, Code, Status, Usage);

  std::string Text =
      Header + Prelude + "\n" + Code.Kernels + "\n" +
      fillTemplate(
          R"(// The GPU's part: the inputs copied in, the kernel launched, the outputs
// copied back.
static void runOnDevice(${DeviceParams}${DimParams}) {
${Buffers}${CopyIn}${Launch}  OPTIML_CHECK(cudaGetLastError());
  OPTIML_CHECK(cudaDeviceSynchronize());
${CopyOut}${Free}}

)",
          {{"DeviceParams", DeviceParams},
           {"DimParams", DimParams},
           {"Buffers", Buffers},
           {"CopyIn", CopyIn},
           {"Launch", Code.Launch},
           {"CopyOut", CopyOut},
           {"Free", Free}});
  // The reference is defined at the end, after a #line naming the spec (so
  // that nvcc's errors in it point at the spec's field), and declared here.
  Text += "// The spec's reference (defined at the end of the file).\nvoid "
          "reference(" +
          referenceParameters(S) + ");\n";
  Text += "\n" + fillTemplate(R"(int main(int argc, char **argv) {
${DimDecls}  long long seed = ${Seed}, check = 1;
  for (int i = 1; i < argc; ++i) {
    if (${ParseArgs}optimlArg(argv[i], "seed", 0, UINT_MAX, &seed) ||
        optimlArg(argv[i], "check", 0, 1, &check))
      continue;
    fprintf(stderr, "optiml-synth: unknown argument '%s'\nusage: %s${Usage} [seed=S] [check=0]\n",
            argv[i], argv[0]);
    return 2;
  }
${CountChecks}${HostArrays}
#ifdef OPTIML_SYNTH_TEST_OUTPUTS
${TestOutputs}#else
  runOnDevice(${DeviceArgs}${IntDims});
#endif
  if (!check) {
    printf("optiml-synth: outputs not checked (check=0)\n");
    return 0;
  }
${RefDecls}  reference(${RefArgs}${IntDims});
  const double abs_tol = ${Abs}, rel_tol = ${Rel};
  bool ok = true;
${Compares}  printf("optiml-synth: %s ${Class}${SizeFormat} seed=%u\n", ok ? "PASS" : "FAIL"${SizeArgs},
         (unsigned)seed);
  return ok ? 0 : 1;
}
)",
                              {{"DimDecls", DimDecls},
                               {"Seed", std::to_string(S.Seed)},
                               {"ParseArgs", ParseArgs},
                               {"Usage", Usage},
                               {"CountChecks", CountChecks},
                               {"HostArrays", HostArrays},
                               {"TestOutputs", TestOutputs},
                               {"DeviceArgs", DeviceArgs},
                               {"IntDims", IntDims},
                               {"RefDecls", RefDecls},
                               {"RefArgs", RefArgs},
                               {"Abs", number(Tol.Abs)},
                               {"Rel", number(Tol.Rel)},
                               {"Compares", Compares},
                               {"Class", className(S.Class).str()},
                               {"SizeFormat", SizeFormat},
                               {"SizeArgs", SizeArgs}});
  Text += "\n// The reference, from " + commentText(S.Path) +
          ":\n// called on the host with the inputs, the outputs to fill and "
          "the sizes.\n" +
          lineDirective(S.Path + " (reference)") + S.Reference;
  if (!StringRef(S.Reference).ends_with("\n"))
    Text += "\n";
  return Text;
}

std::string setProgramStatus(StringRef Source, ArrayRef<std::string> Status) {
  std::string Block;
  for (const std::string &L : Status)
    Block += "// " + commentText(L) + "\n";
  // The header of a template's program: the status lines follow "Written
  // by" (and "Request:") and end at the first "//" line.
  size_t Written = Source.find("\n// Written by clang-optiml synthesize ");
  size_t Start = Written == StringRef::npos ? StringRef::npos
                                            : Source.find('\n', Written + 1);
  if (Start != StringRef::npos &&
      Source.substr(Start + 1).starts_with("// Request: "))
    Start = Source.find('\n', Start + 1);
  size_t End =
      Start == StringRef::npos ? StringRef::npos : Source.find("\n//\n", Start);
  if (End == StringRef::npos)
    return Block + Source.str();
  return (Source.take_front(Start + 1) + Block + Source.drop_front(End + 1))
      .str();
}

} // namespace synth
} // namespace optiml
