# cmake -DINPUT=file -DOUTPUT=file.inc -DNAME=symbol -P EmbedFile.cmake
# Writes INPUT's bytes as a C++ array (64-byte aligned, as cuModuleLoadData
# wants a fatbin) and its size.
file(READ "${INPUT}" Hex HEX)
string(LENGTH "${Hex}" Digits)
math(EXPR Bytes "${Digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," Body "${Hex}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT}: do not edit.\n"
  "alignas(64) static const unsigned char ${NAME}[] = {\n${Body}\n};\n"
  "[[maybe_unused]] static const unsigned long ${NAME}Size = ${Bytes};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
