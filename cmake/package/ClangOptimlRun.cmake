# Runs clang-optiml optimize for a target's <target>-optimize custom target,
# included by the script clang_optiml_optimize() writes for it, which sets
# CMD (the command, one bracket argument each) and STAMP
# (ClangOptimlConfig.cmake). "Nothing faster found" (exit status 3) is a
# result, not a failed build step; afterwards the stamp is touched so that
# the next build compiles the target's CUDA sources again (through
# clang-optiml launch, which serves what was recorded).
# Through sh with stderr joined to stdout in the child: execute_process
# relays the two streams through separate pipes, which would interleave
# optimize's progress and its messages mid-line.
execute_process(COMMAND sh -c "exec \"$0\" \"$@\" 2>&1" ${CMD}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 AND NOT rc EQUAL 3)
  message(FATAL_ERROR "clang-optiml optimize failed (exit status ${rc})")
endif()
file(TOUCH "${STAMP}")
