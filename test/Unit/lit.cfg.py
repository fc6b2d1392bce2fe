import os
import lit.formats

config.name = "clang-optiml-Unit"
# Every gtest binary named *Tests under <build>/unittests.
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = os.path.join(config.optiml_obj_root, "unittests")
config.test_exec_root = config.test_source_root
