# check-layering.cmake - the layering check anyone can run:
#
#   cmake -DMANIFEST=build/layering_manifest.cmake -P tools/check-layering.cmake
#
# (the build runs it as target `layering`, ctest as test `layering`). The
# manifest is what cmake/layering.cmake wrote at configure time. It fails,
# naming every file and header, when
#   - a file includes a header of a module (dt_*) its target does not link
#     (its own link libraries and the headers those pass on);
#   - a file includes another module's internal/ header (a suite may reach
#     the internal/ folders it names INTERNAL);
#   - two modules have a header of the same name (an include would be
#     ambiguous);
#   - docs/hacking.md's module table and the tree disagree (a module
#     missing from the table, a row naming a folder or library that is not
#     there), or a module's folder is missing from the layer picture.
# Only includes in double quotes are looked at; system headers are not
# the modules' business.
cmake_minimum_required(VERSION 3.25)

if(NOT MANIFEST OR NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "usage: cmake -DMANIFEST=BUILD/layering_manifest.cmake -P ${CMAKE_CURRENT_LIST_FILE}"
                      " (the manifest is written when the build is configured)")
endif()
include(${MANIFEST})

set(problems "")
macro(problem text)
  list(APPEND problems "${text}")
endmacro()

# ---- Which module a header belongs to ----

foreach(m ${MODULES})
  foreach(kind HEADERS INTERNAL)
    foreach(h ${MODULE_${m}_${kind}})
      get_filename_component(name ${h} NAME)
      if(DEFINED OWNER_${name})
        problem("header ${name} is in both ${OWNER_${name}} and ${m}: an include of it is ambiguous")
      endif()
      set(OWNER_${name} ${m})
      if(kind STREQUAL INTERNAL)
        set(INTERNAL_${name} TRUE)
      else()
        set(INTERNAL_${name} FALSE)
      endif()
    endforeach()
  endforeach()
endforeach()

# The module of header path as included from file, or "": a path relative
# to the file (what "../x/y.h" reaches), a generated header's prefix
# ("dratopo/v1/" is dt_proto's), else the header's name.
function(owner_of file inc out_module out_internal)
  get_filename_component(dir ${file} DIRECTORY)
  get_filename_component(abs ${inc} ABSOLUTE BASE_DIR ${dir})
  set(${out_module} "" PARENT_SCOPE)
  set(${out_internal} FALSE PARENT_SCOPE)
  foreach(m ${MODULES})
    set(mdir "${SOURCE_DIR}/${MODULE_${m}_DIR}")
    if(inc MATCHES "/" AND EXISTS ${abs})
      get_filename_component(hdir ${abs} DIRECTORY)
      if(hdir STREQUAL mdir OR hdir STREQUAL "${mdir}/internal")
        set(${out_module} ${m} PARENT_SCOPE)
        if(hdir STREQUAL "${mdir}/internal")
          set(${out_internal} TRUE PARENT_SCOPE)
        endif()
        return()
      endif()
    endif()
    if(MODULE_${m}_PREFIX AND inc MATCHES "^${MODULE_${m}_PREFIX}")
      set(${out_module} ${m} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  get_filename_component(name ${inc} NAME)
  if(DEFINED OWNER_${name} AND NOT inc MATCHES "/")
    set(${out_module} ${OWNER_${name}} PARENT_SCOPE)
    set(${out_internal} ${INTERNAL_${name}} PARENT_SCOPE)
  endif()
endfunction()

# ---- Every target's files ----

# A target in a module's folder (its binary, its generator) is part of it.
foreach(t ${TARGETS})
  set(TARGET_${t}_HOME "")
  list(GET TARGET_${t}_FILES 0 first)
  get_filename_component(tdir ${first} DIRECTORY)
  foreach(m ${MODULES})
    if(tdir STREQUAL "${SOURCE_DIR}/${MODULE_${m}_DIR}")
      list(APPEND TARGET_${t}_HOME ${m})
    endif()
  endforeach()
endforeach()

foreach(t ${TARGETS})
  foreach(f ${TARGET_${t}_FILES})
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
    foreach(line ${lines})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" inc "${line}")
      owner_of(${f} ${inc} m internal)
      if(NOT m)
        continue()
      endif()
      if(NOT m IN_LIST TARGET_${t}_VISIBLE AND NOT m IN_LIST TARGET_${t}_HOME)
        problem("${rel}: includes \"${inc}\" of ${m}, which ${t} does not link")
      elseif(internal)
        set(idir "${SOURCE_DIR}/${MODULE_${m}_DIR}/internal")
        if(NOT idir IN_LIST TARGET_${t}_INTERNAL)
          problem("${rel}: includes \"${inc}\", an internal/ header of ${m} (${t} may not)")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

# ---- docs/hacking.md: the module table and the layer picture ----

set(doc ${SOURCE_DIR}/docs/hacking.md)
file(STRINGS ${doc} table REGEX "^    [a-z][a-z0-9_/]*/ +dt_[a-z0-9_]+")
foreach(row ${table})
  string(REGEX REPLACE "^    ([a-z][a-z0-9_/]*)/ +(dt_[a-z0-9_]+).*" "\\1;\\2" cells "${row}")
  list(GET cells 0 dir)
  list(GET cells 1 lib)
  set(ROW_${lib} ${dir})
  if(NOT lib IN_LIST MODULES)
    problem("docs/hacking.md: the table names ${lib} (${dir}/), which the build does not define")
  elseif(NOT MODULE_${lib}_DIR STREQUAL dir)
    problem("docs/hacking.md: the table puts ${lib} in ${dir}/, but it is in ${MODULE_${lib}_DIR}/")
  endif()
endforeach()
file(READ ${doc} text)
string(FIND "${text}" "The layers, each using only those below it" at)
if(at LESS 0)
  problem("docs/hacking.md: no layer picture (\"The layers, each using only those below it\")")
  set(picture "")
else()
  string(SUBSTRING "${text}" ${at} -1 picture)
  string(FIND "${picture}" "\n\n" start)
  string(SUBSTRING "${picture}" ${start} -1 picture)
  string(REGEX MATCH "\n\n(    [^\n]*\n)+" picture "${picture}")
endif()
# The list of links: "        NAME -> NAME..." (dt_ and dt_base left out).
file(STRINGS ${doc} linklines REGEX "^        [a-z_]+ +->")
foreach(line ${linklines})
  string(REGEX REPLACE "^        ([a-z_]+) +->(.*)$" "\\1" name "${line}")
  string(REGEX REPLACE "^        ([a-z_]+) +->(.*)$" "\\2" listed "${line}")
  string(STRIP "${listed}" listed)
  string(REGEX REPLACE " +" ";" listed "${listed}")
  set(m dt_${name})
  set(LINKS_LISTED_${m} TRUE)
  if(NOT m IN_LIST MODULES)
    problem("docs/hacking.md: the list of links names ${name}, which is no module (dt_${name})")
    continue()
  endif()
  set(actual "")
  foreach(l ${MODULE_${m}_LINKS})
    if(NOT l STREQUAL "dt_base")
      string(REGEX REPLACE "^dt_" "" l "${l}")
      list(APPEND actual ${l})
    endif()
  endforeach()
  list(SORT actual)
  list(SORT listed)
  if(NOT "${actual}" STREQUAL "${listed}")
    list(JOIN actual " " a)
    list(JOIN listed " " b)
    problem("docs/hacking.md: ${name} links ${a} (besides base), the list of links says ${b}")
  endif()
endforeach()

foreach(m ${MODULES})
  if(NOT LINKS_LISTED_${m})
    problem("docs/hacking.md: ${m} is missing from the list of links")
  endif()
  if(NOT DEFINED ROW_${m})
    problem("docs/hacking.md: ${m} (${MODULE_${m}_DIR}/) is missing from the module table")
  endif()
  get_filename_component(leaf ${MODULE_${m}_DIR} NAME)
  if(picture AND NOT picture MATCHES "[^a-z_]${leaf}[^a-z_]")
    problem("docs/hacking.md: ${m}'s folder (${leaf}) is missing from the layer picture")
  endif()
endforeach()

if(problems)
  list(REMOVE_DUPLICATES problems)
  list(LENGTH problems n)
  list(JOIN problems "\n  " listed)
  message(FATAL_ERROR "layering: ${n} problem(s):\n  ${listed}\n"
          "(docs/hacking.md, \"Layout and build\", says what each module may use)")
endif()
list(LENGTH TARGETS nt)
message(STATUS "layering: ${nt} targets, every include within what its target links")
