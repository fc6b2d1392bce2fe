# -*- Python -*-
import os
import glob
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "clang-optiml"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".cu", ".test", ".json"]
# Unit/ is not excluded: lit finds <build>/test/Unit/lit.site.cfg.py through
# the exec path and runs the gtest binaries as a nested suite.
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.optiml_obj_root, "test")

llvm_config.use_default_substitutions()
# 'not', 'count', 'split-file' for RUN lines that start with them.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.optiml_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["clang-optiml", "clangd-optiml"],
                                  [config.optiml_tools_dir])

# Hermetic CUDA: the mock header, no SDK headers or libdevice.
inputs = os.path.join(config.test_source_root, "Inputs")
config.substitutions.append(("%inputs", inputs))
config.substitutions.append(("%optiml_tools", config.optiml_tools_dir))
config.substitutions.append(
    ("%mock_args", "-nocudainc -nocudalib -I%s" % inputs))
config.substitutions.append(("%cuda_root", config.cuda_root))
config.substitutions.append(("%optiml_obj_root", config.optiml_obj_root))
config.substitutions.append(("%optiml_src_root", config.optiml_src_root))

config.environment["CLANG_NO_DEFAULT_CONFIG"] = "1"
# Precompiled preambles of the tests' files stay in the build tree.
config.environment["OPTIML_PREAMBLE_DIR"] = os.path.join(
    config.optiml_obj_root, "test", "preambles")
# Children get an allow-listed environment: the stand-in programs of
# Inputs/fake-gpu read these.
config.environment["OPTIML_PASS_ENV"] = "OPTIML_FAKE_LOG,OPTIML_FAKE_NOISY,OPTIML_FAKE_PROBE_BROKEN"
# Tests must not depend on the developer's environment.
for var in ["CUDA_PATH", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
            "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"]:
    config.environment.pop(var, None)

# Features: the real SDK (headers and nvcc), and a GPU.
nvcc = os.path.join(config.cuda_root, "bin", "nvcc")
if os.path.exists(os.path.join(config.cuda_root, "include", "cuda_runtime.h")):
    config.available_features.add("cuda-sdk")
if os.access(nvcc, os.X_OK):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", nvcc))
smi = shutil.which("nvidia-smi")
if smi:
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, timeout=20)
        if out.returncode == 0 and b"GPU" in out.stdout:
            config.available_features.add("cuda-gpu")
    except Exception:
        pass

# Editor integration: clang-apply-replacements reads --export-fixes' YAML;
# clangd and Neovim drive clangd-optiml (Debian: clang-tools-22, clangd-22,
# neovim).
for feature, names in [("clang-apply-replacements",
                         ["clang-apply-replacements-22",
                          "clang-apply-replacements"]),
                        ("clangd", ["clangd-22", "clangd"]),
                        ("nvim", ["nvim"]),
                        ("cmake", ["cmake"]),
                        ("bear", ["bear"])]:
    for name in names:
        path = shutil.which(name)
        if path:
            config.available_features.add(feature)
            config.substitutions.append(
                ("%" + feature.replace("-", "_"), path))
            break

# Emacs with eglot (Debian 12: emacs-nox and elpa-eglot; built in from
# Emacs 29).
emacs = shutil.which("emacs")
if emacs and (glob.glob("/usr/share/emacs/site-lisp/elpa/eglot-*") or
              subprocess.run([emacs, "--batch", "-Q", "--eval",
                              "(require 'eglot)"],
                             capture_output=True).returncode == 0):
    config.available_features.add("emacs-eglot")
    config.substitutions.append(("%emacs", emacs))
