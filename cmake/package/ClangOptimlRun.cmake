# Runs clang-optiml optimize for a target's <target>-optimize custom target,
# included by the script clang_optiml_optimize() writes for it, which sets
# CMD (the command, one bracket argument each) and STAMP (ClangOptimlConfig.cmake):
# "nothing faster found" (exit status 3) is a
# result, not a failed build step; afterwards the stamp is touched so that
# the next build compiles the target's CUDA sources again (through
# clang-optiml launch, which serves what was recorded).
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 AND NOT rc EQUAL 3)
  message(FATAL_ERROR "clang-optiml optimize failed (exit status ${rc})")
endif()
file(TOUCH "${STAMP}")
