//===- Variants.cpp - Recording verified variants -------------------------===//

#include "optiml/Driver/Variants.h"
#include "optiml/Db/Database.h"
#include "optiml/Db/Key.h"
#include "optiml/Eval/Runner.h"
#include "optiml/Frontend/Analysis.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace optiml {

Expected<std::unique_ptr<db::Database>>
openVariantDatabase(StringRef Explicit, StringRef SourcePath,
                    StringRef BuildDir) {
  auto Path = db::databasePath(Explicit, sys::path::parent_path(SourcePath),
                               BuildDir, "");
  if (!Path)
    return Path.takeError();
  auto DB = db::Database::open(*Path);
  if (!DB)
    return createStringError(toString(DB.takeError()) +
                             " (--no-db optimizes without recording)");
  return DB;
}

void recordVariant(db::Database &DB, const VariantToRecord &V,
                   SessionObserver &Obs) {
  db::VariantRecord R;
  R.Inputs =
      db::translationUnitInputs(V.TU->AST->getSourceManager(), V.Original);
  R.Id.InputsDigest = db::inputsDigest(R.Inputs);
  R.Id.Kernels = V.Kernels;
  R.Id.GpuName = V.Gpu->Name;
  R.Id.GpuArch = V.Gpu->Arch;
  R.Id.NvccVersion = V.NvccVersion.str();
  R.Id.NvccFlags = V.NvccFlags;
  R.File = V.File.str();
  R.Source = V.Source.str();
  R.Diff = V.Diff.str();
  R.Speedup = V.Speedup;
  R.Verification = V.Verification.str();
  R.VariantFlags = V.VariantFlags;
  R.ToolVersion = CLANG_OPTIML_VERSION;
  R.Key = R.Id.digest();
  auto Done = DB.record(R);
  if (!Done) {
    Obs.warning("the variant was not recorded: " + toString(Done.takeError()));
    return;
  }
  std::string Key = R.Key.substr(0, 12);
  std::string Where = " (" + DB.path() + ")\n";
  switch (*Done) {
  case db::RecordResult::Inserted:
    Obs.result("recorded in the database: " + Key + Where);
    break;
  case db::RecordResult::Replaced:
    Obs.result("recorded in the database: " + Key +
               ", replacing a slower variant" + Where);
    break;
  case db::RecordResult::KeptExisting:
    Obs.result("the database keeps the variant already recorded under " + Key +
               ", at least as fast" + Where);
    break;
  }
}

} // namespace optiml
