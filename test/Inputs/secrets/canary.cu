// A candidate program that hunts for an API key (test/gpu/canary.test,
// scripts/gpu-canary.sh). The key's value is built at run time from the same
// reversed hex as test/Inputs/secrets/canary.py, so no file holds it: a
// search finds it only where the tool put it. Routes: the program's own
// environment; /proc/<pid>/environ and cmdline of every ancestor; the memory
// of the ancestors up to clang-optiml (the tool, the sanitizer); every file
// under the directory given as the first argument (the run directory, the
// caches, the config); every .clang-optiml.json from the working directory
// up; ~/.cache/clang-optiml/llm. Prints "canary: clean, N routes" and exits
// 0, or prints each finding as "CANARY FOUND: <route>" on stderr and exits
// 3. Then runs a small kernel, so that evaluation has something to verify.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

extern char **environ;

static const char *const Hex =
    "79656b2d6c6165722d612d746f6e2d34356531336337662d7972616e61632d6c6d6974706f";

static std::string key() {
  std::string S;
  for (size_t I = 0; Hex[I] && Hex[I + 1]; I += 2) {
    char B[3] = {Hex[I], Hex[I + 1], 0};
    S += static_cast<char>(std::strtol(B, nullptr, 16));
  }
  return std::string(S.rbegin(), S.rend());
}

static std::string Key;
static const char *const Names[] = {"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=",
                                    "MY_LLM_CRED="};
static int Routes = 0, Found = 0;

static bool readAll(const std::string &Path, std::string &Out,
                    size_t Limit = 64u << 20) {
  int FD = open(Path.c_str(), O_RDONLY);
  if (FD < 0)
    return false;
  Out.clear();
  char Buf[65536];
  ssize_t N;
  while ((N = read(FD, Buf, sizeof(Buf))) > 0 && Out.size() < Limit)
    Out.append(Buf, N);
  close(FD);
  return true;
}

static bool holds(const std::string &Data, bool WithNames) {
  if (Data.find(Key) != std::string::npos)
    return true;
  if (WithNames)
    for (const char *N : Names)
      if (Data.find(N) != std::string::npos)
        return true;
  return false;
}

static void report(const std::string &Route, bool Hit) {
  ++Routes;
  if (Hit) {
    ++Found;
    fprintf(stderr, "CANARY FOUND: %s\n", Route.c_str());
  }
}

// 'denied' (false, Denied set), or whether the key is in readable memory.
static bool memoryHolds(pid_t Pid, bool &Denied) {
  Denied = false;
  std::string Maps;
  char P[64];
  snprintf(P, sizeof(P), "/proc/%d/mem", Pid);
  int FD = open(P, O_RDONLY);
  if (FD < 0) {
    Denied = true;
    return false;
  }
  snprintf(P, sizeof(P), "/proc/%d/maps", Pid);
  bool Hit = false;
  if (readAll(P, Maps)) {
    size_t Pos = 0;
    while (!Hit && Pos < Maps.size()) {
      size_t End = Maps.find('\n', Pos);
      std::string Line = Maps.substr(Pos, End - Pos);
      Pos = End == std::string::npos ? Maps.size() : End + 1;
      unsigned long Lo, Hi;
      char Perm[8];
      if (sscanf(Line.c_str(), "%lx-%lx %7s", &Lo, &Hi, Perm) != 3 ||
          Perm[0] != 'r' || Hi - Lo > (1ul << 30) ||
          Line.find("[vvar") != std::string::npos ||
          Line.find("[vsyscall]") != std::string::npos)
        continue;
      std::string Chunk(Hi - Lo, '\0');
      ssize_t N = pread(FD, &Chunk[0], Chunk.size(), static_cast<off_t>(Lo));
      if (N > 0 && holds(Chunk.substr(0, N), false))
        Hit = true;
    }
  }
  close(FD);
  return Hit;
}

static void ancestors() {
  pid_t Pid = getppid();
  bool BelowTool = true;
  for (int Depth = 0; Pid > 1 && Depth < 64; ++Depth) {
    char P[64];
    std::string Comm, Stat, Data;
    snprintf(P, sizeof(P), "/proc/%d/comm", Pid);
    if (!readAll(P, Comm))
      return;
    while (!Comm.empty() && Comm.back() == '\n')
      Comm.pop_back();
    for (const char *What : {"environ", "cmdline"}) {
      snprintf(P, sizeof(P), "/proc/%d/%s", Pid, What);
      bool Readable = readAll(P, Data);
      report(std::string(What) + " of " + Comm,
             Readable && holds(Data, true));
    }
    if (BelowTool) {
      bool Denied;
      report("memory of " + Comm, memoryHolds(Pid, Denied));
      printf("canary: memory of %s: %s\n", Comm.c_str(),
             Denied ? "denied" : "readable");
    }
    BelowTool = BelowTool && Comm != "clang-optiml";
    snprintf(P, sizeof(P), "/proc/%d/stat", Pid);
    if (!readAll(P, Stat))
      return;
    size_t Paren = Stat.rfind(')');
    char State;
    int PPid;
    if (Paren == std::string::npos ||
        sscanf(Stat.c_str() + Paren + 1, " %c %d", &State, &PPid) != 2)
      return;
    Pid = PPid;
  }
}

static void files(const std::string &Dir, int Depth = 0) {
  if (Depth > 16)
    return;
  DIR *D = opendir(Dir.c_str());
  if (!D)
    return;
  while (dirent *E = readdir(D)) {
    std::string Name = E->d_name;
    if (Name == "." || Name == "..")
      continue;
    std::string Path = Dir + "/" + Name;
    struct stat St;
    if (lstat(Path.c_str(), &St) != 0 || S_ISLNK(St.st_mode))
      continue;
    if (S_ISDIR(St.st_mode)) {
      files(Path, Depth + 1);
      continue;
    }
    std::string Data;
    if (S_ISREG(St.st_mode) && readAll(Path, Data))
      report("file " + Path, holds(Data, false));
  }
  closedir(D);
}

__global__ void scale(int n, float a, float *x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = a * x[i] + 1.0f;
}

int main(int argc, char **argv) {
  Key = key();
  std::string Env;
  for (char **E = environ; E && *E; ++E)
    Env += std::string(*E) + '\n';
  report("own environment", holds(Env, true));
  ancestors();
  if (argc > 1)
    files(argv[1]);
  char Cwd[4096];
  if (getcwd(Cwd, sizeof(Cwd))) {
    std::string D = Cwd;
    while (true) {
      std::string Data;
      if (readAll(D + "/.clang-optiml.json", Data))
        report("config " + D + "/.clang-optiml.json", holds(Data, false));
      if (D == "/" || D.empty())
        break;
      size_t Slash = D.rfind('/');
      D = Slash == 0 ? "/" : D.substr(0, Slash);
    }
  }
  if (const char *Home = getenv("HOME"))
    files(std::string(Home) + "/.cache/clang-optiml/llm");
  Key.assign(Key.size(), '\0');

  const int N = 1 << 20;
  std::vector<float> H(N);
  for (int I = 0; I < N; ++I)
    H[I] = static_cast<float>(I % 1000) * 0.5f;
  float *X;
  cudaMalloc(&X, N * sizeof(float));
  cudaMemcpy(X, H.data(), N * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(N + 255) / 256, 256>>>(N, 2.0f, X);
  cudaMemcpy(H.data(), X, N * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(X);
  double Sum = 0;
  for (float V : H)
    Sum += V;
  printf("checksum %.1f\n", Sum);
  if (Found) {
    fprintf(stderr, "CANARY FOUND: %d of %d routes hold the key\n", Found,
            Routes);
    return 3;
  }
  printf("canary: clean, %d routes\n", Routes);
  return 0;
}
