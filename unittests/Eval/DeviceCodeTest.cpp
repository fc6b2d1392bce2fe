//===- DeviceCodeTest.cpp - cuobjdump's output without the build's names --===//

#include "optiml/Eval/DeviceCode.h"
#include "gtest/gtest.h"
#include <string>

using namespace optiml;

namespace {

/// A `cuobjdump -elf` dump of one kernel (cut down from a real one), with
/// what a build may vary as parameters.
std::string dump(const std::string &Identifier, const std::string &Ptxas,
                 const std::string &InfoSize, const std::string &Command,
                 bool MaxThreads, const std::string &Regs,
                 const std::string &Word) {
  std::string S = "\nFatbin elf code:\n================\narch = sm_90\n"
                  "code version = [1,8]\nhost = linux\ncompile_size = 64bit\n";
  if (!Identifier.empty())
    S += "identifier = " + Identifier + "\n";
  S += "\n64-bit ELF: type=ET_EXEC, ABI=8, sm=90, toolkit=13.0, "
       "flags=0x6005a04\nSections:\nIndex Offset   Size ES Align Type Flags "
       "Link Info Name\n    4    3f0     68  0  1 PROGBITS 0 0 0 "
       ".debug_frame\n    5    458     " +
       InfoSize +
       "  0  4 NOTE  2000000    0        0 .note.nv.tkinfo\n"
       "    6    500     90  0  1 PROGBITS 0 0 0 .nv_debug_ptx_txt\n"
       "    7    590     24  0  4 CUDA_INFO 0 3 0 .nv.info\n"
       "    9    5b4     78  0  4 CUDA_INFO 40 3 c .nv.info._Z5scaleiPKfPf\n"
       "    c    680    200  0 80 PROGBITS 6 3 8 .text._Z5scaleiPKfPf\n\n"
       ".section .note.nv.tkinfo\nEntry: 1\n\tTool Name: ptxas\n"
       "\tTool Command Line Arguments: " +
       Command + "\n\n.section .nv_debug_ptx_txt\n.version 9.0\n.file 1 \"" +
       Identifier +
       "\"\n.section\t.debug_str\n{\n}\n"
       "\n\n.nv.info._Z5scaleiPKfPf\n\t<0x1>\n\tAttribute:\t"
       "EIATTR_CUDA_API_VERSION\n\tFormat:\tEIFMT_SVAL\n\tValue:\t0x82 \n"
       "\t<0x2>\n\tAttribute:\tEIATTR_MAXREG_COUNT\n\tFormat:\tEIFMT_HVAL\n"
       "\tValue:\t" +
       std::string(MaxThreads ? "0x80" : "0xff") + "\n";
  unsigned Ord = 3;
  if (MaxThreads)
    S += "\t<0x" + std::to_string(Ord++) +
         ">\n\tAttribute:\tEIATTR_MAX_THREADS\n\tFormat:\tEIFMT_SVAL\n"
         "\tValue:\t0x200 0x1 0x1 \n";
  S += "\t<0x" + std::to_string(Ord++) +
       ">\n\tAttribute:\tEIATTR_EXIT_INSTR_OFFSETS\n\tFormat:\tEIFMT_SVAL\n"
       "\tValue:\t0x70 0x120 \n\n.nv.info\n\t<0x1>\n\tAttribute:\t"
       "EIATTR_REGCOUNT\n\tFormat:\tEIFMT_SVAL\n\tValue:\tfunction: "
       "_Z5scaleiPKfPf(0x8)\tregister count: " +
       Regs +
       "\n\n.text._Z5scaleiPKfPf\nlmem=0\tsmem=0\n"
       "0xff017b82 0x00000a00 0x00000800 0x000fe200\n" +
       Word +
       " 0x00000000 0x00002100 0x000e2e00\n\n.section .debug_frame\n"
       "  initial instructions: 19 bytes, ptr = 0x8080810c\n\n"
       "Fatbin ptx code:\n================\narch = sm_90\ncompressed\n";
  if (!Identifier.empty())
    S += "identifier = " + Identifier + "\n";
  S += "ptxasOptions = " + Ptxas + "\n";
  return S;
}

std::string base() {
  return dump("", "-v  ", "a8", "-v  -arch sm_90 -m 64", false, "10",
              "0x00007919");
}

TEST(DeviceCodeTest, WhatNamesTheBuildIsLeftOut) {
  std::string A = normalizeDeviceDump(base());
  // Another file name, ptxas options and so note length and offsets.
  std::string B = normalizeDeviceDump(dump(
      "/tmp/optiml-build-1a2b3c/scale.cu", "-v  --generate-line-info ", "c4",
      "-v --generate-line-info -arch sm_90 -m 64", false, "10", "0x00007919"));
  EXPECT_EQ(A, B);
  EXPECT_EQ(A.find("tmp"), std::string::npos);
  EXPECT_EQ(A.find("ptxas"), std::string::npos);
  EXPECT_EQ(A.find("debug"), std::string::npos);
  // The PTX a debug section holds starts no section of its own.
  EXPECT_EQ(A.find(".version"), std::string::npos);
  // The code itself and the register count are kept.
  EXPECT_NE(A.find("0xff017b82 0x00000a00 0x00000800 0x000fe200"),
            std::string::npos);
  EXPECT_NE(A.find("register count: 10"), std::string::npos);
  EXPECT_NE(A.find("lmem=0\tsmem=0"), std::string::npos);
}

TEST(DeviceCodeTest, LaunchBoundsThatLeaveTheCodeAloneAreLeftOut) {
  EXPECT_EQ(normalizeDeviceDump(base()),
            normalizeDeviceDump(dump("", "-v  ", "a8", "-v  -arch sm_90 -m 64",
                                     /*MaxThreads=*/true, "10", "0x00007919")));
}

TEST(DeviceCodeTest, OtherInstructionsOrRegistersDiffer) {
  std::string A = normalizeDeviceDump(base());
  EXPECT_NE(A,
            normalizeDeviceDump(dump("", "-v  ", "a8", "-v  -arch sm_90 -m 64",
                                     false, "10", "0x00007918")));
  EXPECT_NE(A,
            normalizeDeviceDump(dump("", "-v  ", "a8", "-v  -arch sm_90 -m 64",
                                     false, "12", "0x00007919")));
}

TEST(DeviceCodeTest, MissingCuobjdumpIsAnError) {
  auto C = deviceCode("/nonexistent/cuobjdump", "/nonexistent/prog");
  ASSERT_FALSE(C);
  llvm::consumeError(C.takeError());
}

} // namespace
