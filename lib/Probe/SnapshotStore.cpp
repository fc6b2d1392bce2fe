//===- SnapshotStore.cpp - The reference run's saved buffers --------------===//

#include "ProbeInternal.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

using nlohmann::json;

namespace optiml {
namespace probe {

namespace {

std::string fileName(const SnapshotEntry &E) {
  std::string Safe;
  for (char C : E.Kernel)
    Safe += (std::isalnum(static_cast<unsigned char>(C)) || C == '_') ? C : '_';
  if (Safe.size() > 80)
    Safe.resize(80);
  // The name alone may collide ("k<int>" and "k_int_"): add its hash.
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "-%08zx.%u.p%u.w%u",
                std::hash<std::string>()(E.Kernel) & 0xffffffffu, E.Ordinal,
                E.Param, E.Word);
  std::string Name = Safe + Buf;
  if (E.Element)
    Name += ".e" + std::to_string(E.Element);
  return Name + ".bin";
}

std::string systemError(const std::string &What, const std::string &Path) {
  return What + " " + Path + ": " + std::strerror(errno);
}

} // namespace

bool SnapshotStore::create(std::string &Error) {
  if (::mkdir(Dir.c_str(), 0755) != 0 && errno != EEXIST) {
    Error = systemError("cannot create snapshot directory", Dir);
    return false;
  }
  std::string Manifest = Dir + "/manifest.jsonl";
  std::FILE *F = std::fopen(Manifest.c_str(), "w");
  if (!F) {
    Error = systemError("cannot write", Manifest);
    return false;
  }
  std::fclose(F);
  return true;
}

bool SnapshotStore::appendLine(const std::string &Line, std::string &Error) {
  std::string Manifest = Dir + "/manifest.jsonl";
  std::FILE *F = std::fopen(Manifest.c_str(), "a");
  if (!F) {
    Error = systemError("cannot append to", Manifest);
    return false;
  }
  bool Ok = std::fwrite(Line.data(), 1, Line.size(), F) == Line.size();
  Ok &= std::fclose(F) == 0;
  if (!Ok)
    Error = systemError("cannot append to", Manifest);
  return Ok;
}

namespace {

bool writeFile(const std::string &Path, const std::vector<uint8_t> &Data,
               std::string &Error) {
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  bool Ok = F && std::fwrite(Data.data(), 1, Data.size(), F) == Data.size();
  if (F)
    Ok &= std::fclose(F) == 0;
  if (!Ok)
    Error = systemError("cannot write snapshot", Path);
  return Ok;
}

bool readFile(const std::string &Path, uint64_t Bytes,
              std::vector<uint8_t> &Data, std::string &Error) {
  std::FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F) {
    Error = systemError("cannot read snapshot", Path);
    return false;
  }
  Data.resize(Bytes);
  bool Ok = std::fread(Data.data(), 1, Data.size(), F) == Data.size();
  std::fclose(F);
  if (!Ok)
    Error = "snapshot " + Path + " is shorter than its manifest entry";
  return Ok;
}

} // namespace

bool SnapshotStore::save(SnapshotEntry E, const std::vector<uint8_t> &Data,
                         const std::vector<uint8_t> *Poisoned,
                         std::string &Error) {
  E.File = fileName(E);
  E.Bytes = Data.size();
  E.PoisonChecked = Poisoned && Poisoned->size() == Data.size();
  if (!writeFile(Dir + "/" + E.File, Data, Error))
    return false;
  if (E.PoisonChecked &&
      !writeFile(Dir + "/" + E.File + ".poisoned", *Poisoned, Error))
    return false;
  json J{{"kernel", E.Kernel},
         {"ordinal", E.Ordinal},
         {"param", E.Param},
         {"word", E.Word},
         {"element", E.Element},
         {"bytes", E.Bytes},
         {"offset", E.Offset},
         {"written", E.Written},
         {"poisonChecked", E.PoisonChecked},
         {"file", E.File}};
  Entries[{E.Kernel, E.Ordinal, E.Param, E.Word, E.Element}] = E;
  return appendLine(
      J.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", Error);
}

void SnapshotStore::saveLaunchCount(const std::string &Kernel, unsigned Count) {
  json J{{"kernel", Kernel}, {"launches", Count}};
  std::string Ignored;
  appendLine(J.dump(-1, ' ', false, json::error_handler_t::replace) + "\n",
             Ignored);
  Counts[Kernel] = Count;
}

bool SnapshotStore::load(std::string &Error) {
  std::string Manifest = Dir + "/manifest.jsonl";
  std::ifstream In(Manifest);
  if (!In) {
    Error = systemError("cannot read", Manifest) +
            " (was the reference run made with this snapshot directory?)";
    return false;
  }
  std::string Line;
  unsigned LineNo = 0;
  while (std::getline(In, Line)) {
    ++LineNo;
    if (Line.empty())
      continue;
    try {
      json J = json::parse(Line);
      std::string Kernel = J.at("kernel").get<std::string>();
      if (J.contains("launches")) {
        Counts[Kernel] = J.at("launches").get<long>();
        continue;
      }
      SnapshotEntry E;
      E.Kernel = Kernel;
      E.Ordinal = J.at("ordinal").get<unsigned>();
      E.Param = J.at("param").get<unsigned>();
      E.Word = J.at("word").get<unsigned>();
      E.Element = J.value("element", 0u);
      E.Bytes = J.at("bytes").get<uint64_t>();
      E.Offset = J.at("offset").get<uint64_t>();
      E.Written = J.at("written").get<bool>();
      E.PoisonChecked = J.at("poisonChecked").get<bool>();
      E.File = J.at("file").get<std::string>();
      if (E.File.find('/') != std::string::npos)
        throw std::runtime_error("file name with a slash");
      Entries[{E.Kernel, E.Ordinal, E.Param, E.Word, E.Element}] = E;
    } catch (const std::exception &Ex) {
      Error = Manifest + ":" + std::to_string(LineNo) + ": " + Ex.what();
      return false;
    }
  }
  return true;
}

bool SnapshotStore::read(const SnapshotEntry &E, std::vector<uint8_t> &Data,
                         std::string &Error) const {
  return readFile(Dir + "/" + E.File, E.Bytes, Data, Error);
}

bool SnapshotStore::readPoisoned(const SnapshotEntry &E,
                                 std::vector<uint8_t> &Data,
                                 std::string &Error) const {
  return readFile(Dir + "/" + E.File + ".poisoned", E.Bytes, Data, Error);
}

const SnapshotEntry *SnapshotStore::find(const std::string &Kernel,
                                         unsigned Ordinal, unsigned Param,
                                         unsigned Word,
                                         unsigned Element) const {
  auto It = Entries.find({Kernel, Ordinal, Param, Word, Element});
  return It == Entries.end() ? nullptr : &It->second;
}

std::vector<const SnapshotEntry *>
SnapshotStore::launch(const std::string &Kernel, unsigned Ordinal) const {
  std::vector<const SnapshotEntry *> Out;
  for (auto It = Entries.lower_bound({Kernel, Ordinal, 0u, 0u, 0u});
       It != Entries.end() && std::get<0>(It->first) == Kernel &&
       std::get<1>(It->first) == Ordinal;
       ++It)
    Out.push_back(&It->second);
  return Out;
}

bool SnapshotStore::everWritten(const std::string &Kernel, unsigned Param,
                                unsigned Word, unsigned Element) const {
  for (const auto &[Key, E] : Entries)
    if (E.Kernel == Kernel && E.Param == Param && E.Word == Word &&
        E.Element == Element && E.Written)
      return true;
  return false;
}

long SnapshotStore::launchCount(const std::string &Kernel) const {
  auto It = Counts.find(Kernel);
  return It == Counts.end() ? -1 : It->second;
}

} // namespace probe
} // namespace optiml
