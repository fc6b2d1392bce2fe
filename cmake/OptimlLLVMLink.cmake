# optiml_llvm: one interface target that every component links to get clang
# and LLVM, so the link mode is decided in one place.
#
#  SHARED: Debian's libclang-cpp.so and libLLVM.so (fast links for development).
#  STATIC: the component archives, so the tool runs on machines without LLVM
#          (the bundle made by tools/bundle.sh).
add_library(optiml_llvm INTERFACE)

if(OPTIML_LLVM_LINK STREQUAL "SHARED")
  target_link_libraries(optiml_llvm INTERFACE clang-cpp LLVM)
elseif(OPTIML_LLVM_LINK STREQUAL "STATIC")
  # Debian's LLVMConfig sets LLVM_LINK_LLVM_DYLIB, which makes
  # add_llvm_executable link libLLVM.so into every tool.
  set(LLVM_LINK_LLVM_DYLIB OFF)
  llvm_map_components_to_libnames(OPTIML_LLVM_STATIC_LIBS
    support core option targetparser frontendopenmp frontendhlsl
    frontendoffloading mc mcparser binaryformat bitreader bitstreamreader
    profiledata object textapi windowsdriver demangle remarks analysis
    transformutils scalaropts plugins irreader asmparser debuginfodwarf
    debuginfodwarflowlevel objectyaml)
  # Debian builds LLVM with LLVM_LINK_LLVM_DYLIB, so the imported clang
  # archives depend on the shared "LLVM" target: point them at the archives.
  get_property(_optiml_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(_t IN LISTS _optiml_imported)
    if(_t MATCHES "^clang")
      get_target_property(_deps ${_t} INTERFACE_LINK_LIBRARIES)
      if(_deps)
        list(TRANSFORM _deps REPLACE "^LLVM$" "${OPTIML_LLVM_STATIC_LIBS}")
        set_target_properties(${_t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_deps}")
      endif()
    endif()
  endforeach()
  # LLVMSupport names libz3 (never needed by us, absent on GPU nodes) and a
  # zstd target that only exists with libzstd-dev: pin both down.
  if(NOT TARGET zstd::libzstd_shared)
    add_library(zstd::libzstd_shared SHARED IMPORTED)
    find_library(_optiml_zstd NAMES zstd libzstd.so.1 REQUIRED)
    set_target_properties(zstd::libzstd_shared PROPERTIES IMPORTED_LOCATION "${_optiml_zstd}")
  endif()
  set_target_properties(LLVMSupport PROPERTIES
    INTERFACE_LINK_LIBRARIES "rt;dl;m;ZLIB::ZLIB;zstd::libzstd_shared;LLVMDemangle")
  target_link_libraries(optiml_llvm INTERFACE
    clangTooling clangToolingCore clangASTMatchers clangRewrite clangFrontend
    clangDriver clangOptions clangSerialization clangParse clangSema
    clangIndex clangAPINotes clangAnalysis clangAnalysisLifetimeSafety clangEdit clangAST
    clangSupport clangLex clangBasic ${OPTIML_LLVM_STATIC_LIBS})
else()
  message(FATAL_ERROR "OPTIML_LLVM_LINK must be SHARED or STATIC")
endif()

# optiml_add_library(NAME src...): a component library with the project's
# flags. LLVM's flags turn exceptions off; we turn them back on because
# nlohmann/json reports errors by throwing (caught at the boundary, never
# crossing a library API).
function(optiml_add_library name)
  add_library(${name} STATIC ${ARGN})
  llvm_update_compile_flags(${name})
  target_compile_options(${name} PRIVATE -fexceptions)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
