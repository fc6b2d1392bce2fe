//===- KernelModel.h - What the optimizer knows about each kernel -*- C++
//-*-===//
//
// The kernel model is plain data built from a parsed translation unit. It is
// what `clang-optiml analyze` prints, what catalog edits read to decide
// whether they apply, and what the verifier reads for element types.
//
// Ids are stable across unrelated edits: a kernel by its qualified name, a
// launch site by `<kernel>/launch<N>` (source order), a loop by
// `<kernel>/loop<i>` with `.j` for nesting (source order within the body).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_FRONTEND_KERNELMODEL_H
#define OPTIML_FRONTEND_KERNELMODEL_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace optiml {

/// A position in a file (1-based line and column; Offset is the byte offset
/// in the file, for rewriting). Positions inside a kernel are in the file
/// that defines it (KernelInfo::File), those of a launch in
/// LaunchSite::File.
struct SourcePos {
  unsigned Line = 0;
  unsigned Column = 0;
  unsigned Offset = 0;
};

struct SourceSpan {
  SourcePos Begin;
  SourcePos End; ///< one past the last character
};

/// A pointer member of a struct that a kernel's pointer parameter points to
/// (`struct Mats { float *a, *c; }; __global__ void k(const Mats *m)`).
struct PointerField {
  unsigned Offset = 0;   ///< bytes from the start of the struct
  std::string Name;      ///< `c`; nested members as `inner.c`
  std::string InnerType; ///< what it points to, typedefs seen through
  unsigned InnerSize = 0;
  bool InnerIsFloat = false;
};

struct ParamInfo {
  unsigned Index = 0;
  std::string Name;
  std::string Type; ///< as written, e.g. "const float *__restrict__"
  bool IsPointer = false;
  std::string ElementType; ///< pointee (pointers) or the type itself
  /// ElementType with typedefs and aliases seen through (`real` of
  /// `typedef float real` is "float"): what the verifier reads values as.
  std::string CanonicalElementType;
  unsigned ElementSize = 0; ///< bytes; 0 if dependent or incomplete
  bool IsConst = false;     ///< pointee is const (pointers) / param is const
  bool IsRestrict = false;  ///< the pointer is __restrict__
  bool IsFloat = false;     ///< element is a floating-point type
  /// A kernel template's element whose type depends on a template
  /// parameter (`T *y`): the element every instantiation gives it, when all
  /// agree (`float`, 4 bytes), so the verifier compares values, not bytes;
  /// empty otherwise.
  std::string InstanceElementType;
  unsigned InstanceElementSize = 0;
  bool InstanceIsFloat = false;
  /// The element is itself a pointer (`float **a`, an array of device
  /// pointers): what those point to, so the verifier can follow them.
  bool ElementIsPointer = false;
  std::string InnerElementType;
  unsigned InnerElementSize = 0;
  bool InnerIsFloat = false;
  /// The element is a struct with pointer members (an array of structs in
  /// device memory): each member, so the verifier can follow them.
  std::vector<PointerField> ElementPointerFields;
  /// Read and written through this parameter inside the kernel (pointers).
  bool Read = false;
  bool Written = false;
};

struct LaunchSite {
  std::string Id;     ///< <kernel>/launch<N>
  std::string Kernel; ///< qualified name of the kernel (template name)
  std::string Caller; ///< function the launch is in
  std::string File;   ///< the file the launch is written in (absolute)
  SourceSpan Range;   ///< the whole `k<<<...>>>(...)` expression
  std::string Grid, Block, Shared,
      Stream;                       ///< as written; Shared/Stream may be empty
  SourceSpan GridRange, BlockRange; ///< for rewriting
  std::vector<std::string> TemplateArgs; ///< explicit or deduced
  std::vector<std::string> Args;         ///< kernel arguments as written
  bool InMacro = false; ///< the launch is written inside a macro expansion
  /// GridRange (BlockRange) spells the whole grid (block) once, in File:
  /// rewriting that text rewrites this launch's grid and nothing else.
  /// Always so for a launch written out in File; for one written through a
  /// function-like macro when the grid is an argument of the invocation
  /// that the macro's body uses once (not when written in the body).
  bool GridInPlace = false, BlockInPlace = false;
};

struct LoopInfo {
  std::string Id;   ///< <kernel>/loop0.1
  std::string Kind; ///< for, while, do, range-for
  SourceSpan Range;
  std::string Parent;               ///< enclosing loop id, empty at top level
  unsigned Depth = 0;               ///< 0 for a top-level loop
  std::string InductionVar;         ///< empty if not recognized
  std::string Init, Bound, Step;    ///< as written (for loops)
  std::optional<int64_t> TripCount; ///< when constant
  bool HasUnrollPragma = false;
  /// Loop bound depends on threadIdx/blockIdx (e.g. grid-stride loop).
  bool ThreadDependentBounds = false;
};

enum class AddressSpace { Global, Shared, Local };
/// How consecutive threads (threadIdx.x, x+1, ...) address memory.
enum class Coalescing {
  Unit,    ///< index grows by 1 per thread: coalesced
  Uniform, ///< same address for every thread of a warp (broadcast)
  Strided, ///< grows by a constant or symbolic stride other than 1
  Unknown, ///< non-affine (indirect, division, ...)
};

struct MemoryAccess {
  AddressSpace Space = AddressSpace::Global;
  std::string Base;    ///< parameter or shared array name
  int ParamIndex = -1; ///< parameter index for global accesses
  /// Accesses through a pointer the kernel loads from memory (`const float
  /// *a = A[blockIdx.x]`, a member of a struct read from an array): the
  /// load that gives the pointer, as written; Base is then the local or
  /// member written at the access (`a`, `p.a`) and ParamIndex is -1.
  std::string Through;
  std::string Index; ///< index expression as written
  bool IsRead = false;
  bool IsWrite = false;
  bool IsAtomic = false;
  Coalescing Pattern = Coalescing::Unknown;
  /// Stride in elements per threadIdx.x when constant (Unit: 1).
  std::optional<int64_t> Stride;
  bool Indirect = false; ///< the index itself loads from memory
  std::string Loop;      ///< innermost enclosing loop id, empty if none
  SourcePos Pos;
};

struct SharedDecl {
  std::string Name;
  std::string Type;
  std::optional<uint64_t> Bytes; ///< empty for extern (dynamic) shared
  bool Dynamic = false;
};

struct CallSite {
  std::string Name;
  SourcePos Pos;
  std::string Loop;
};

/// A use of a kernel other than a direct launch (`k<<<...>>>`): its address
/// stored in a function pointer or passed to a function (cudaLaunchKernel,
/// an occupancy query). Launches made through it are not in the model.
struct AddressUse {
  std::string File; ///< absolute
  SourcePos Pos;
  std::string PassedTo; ///< the called function when an argument, else empty
};

enum class KernelClass { Map, Reduction, Stencil, MatmulLike, GatherScatter };

struct KernelInfo {
  std::string Name;          ///< as written
  std::string QualifiedName; ///< with namespaces; the kernel's id
  std::string USR;
  /// The file that defines the kernel (absolute): the main file or a user
  /// file it includes (a header, an included .cu). Edits rewrite it.
  std::string File;
  SourceSpan Range; ///< the definition
  SourceSpan BodyRange;
  bool IsTemplate = false;
  std::vector<std::string> TemplateParams;
  /// Launched instantiations, e.g. "scale<float, 256>".
  std::vector<std::string> Instantiations;
  bool InMacro = false; ///< the definition comes from a macro expansion
  std::vector<std::string> LaunchBounds; ///< __launch_bounds__ args as written
  std::vector<ParamInfo> Params;
  std::vector<LaunchSite> Launches;
  /// Uses of the kernel's address: launches through them are unknown, so
  /// Launches may not be all of its launches.
  std::vector<AddressUse> AddressTaken;
  std::vector<LoopInfo> Loops;
  std::vector<MemoryAccess> Accesses;
  std::vector<SharedDecl> Shared;
  std::vector<CallSite> Syncthreads;
  std::vector<CallSite> Atomics;
  std::vector<CallSite> MathCalls;
  std::vector<CallSite> DeviceCalls;    ///< __device__ helpers called
  std::vector<CallSite> WarpPrimitives; ///< __shfl_*, __syncwarp, ballot...
  bool Uses2DThreads = false;           ///< threadIdx.y / blockIdx.y appear
  KernelClass Class = KernelClass::Map;
  std::string ClassReason; ///< why this class was chosen
};

struct KernelModel {
  std::string File; ///< the file the model was built for, as parsed
  std::vector<KernelInfo> Kernels;

  const KernelInfo *findKernel(const std::string &QualifiedName) const;
  const LaunchSite *findLaunch(const std::string &Id) const;
  const LoopInfo *findLoop(const std::string &Id) const;
};

const char *toString(KernelClass C);
const char *toString(Coalescing C);
const char *toString(AddressSpace S);

} // namespace optiml

#endif
