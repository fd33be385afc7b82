# Writes OUTPUT: a C++ initializer list of the bytes of INPUT and a closing
# NUL, to be included as `constexpr char kName[] = {\n#include "OUTPUT"\n};`.
# Bytes rather than a raw string literal, so that no text of INPUT can end
# the literal. Run at build time:
#   cmake -DINPUT=page.html -DOUTPUT=page.inc -P EmbedFile.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" length)
set(body "")
# 16 bytes a line: 32 hex digits.
set(offset 0)
while(offset LESS length)
  string(SUBSTRING "${hex}" ${offset} 32 line)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," line "${line}")
  string(APPEND body "${line}\n")
  math(EXPR offset "${offset} + 32")
endwhile()
get_filename_component(name "${INPUT}" NAME)
set(text "// Generated from ${name} by cmake/EmbedFile.cmake: do not edit.\n${body}'\\0'\n")
# Rewritten only when it changes, so that a rebuild compiles nothing new.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${text}")
