# gen_served_kinds.cmake - compiles served-kinds.txt into a C table:
#   cmake -DIN=served-kinds.txt -DOUT=served_kinds.c -P gen_served_kinds.cmake
# One struct model_served per line: group, version, and the kinds as one
# space-separated string (model_served_kind looks them up).
file(STRINGS "${IN}" lines)
set(body "")
set(n 0)
foreach(line IN LISTS lines)
  string(STRIP "${line}" line)
  if(line STREQUAL "" OR line MATCHES "^#")
    continue()
  endif()
  if(NOT line MATCHES "^([a-z0-9.-]+/)?([a-z0-9]+)( [A-Z][A-Za-z0-9]*)+$")
    message(FATAL_ERROR "${IN}: not GROUP/VERSION KIND...: ${line}")
  endif()
  # (REGEX REPLACE would apply "^" again after each match.)
  string(FIND "${line}" " " sp)
  string(SUBSTRING "${line}" 0 ${sp} gv)
  math(EXPR sp "${sp} + 1")
  string(SUBSTRING "${line}" ${sp} -1 kinds)
  if(gv MATCHES "/")
    string(REGEX REPLACE "/.*" "" group "${gv}")
    string(REGEX REPLACE ".*/" "" version "${gv}")
  else()
    set(group "")
    set(version "${gv}")
  endif()
  string(APPEND body "\t{ \"${group}\", \"${version}\", \"${kinds}\" },\n")
  math(EXPR n "${n} + 1")
endforeach()
file(WRITE "${OUT}.tmp"
  "/* served_kinds.c - generated from served-kinds.txt by gen_served_kinds.cmake. */\n"
  "#include \"model_internal.h\"\n\n"
  "const struct model_served model_served_table[] = {\n${body}};\n\n"
  "const size_t model_n_served = ${n};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
