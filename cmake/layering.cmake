# layering.cmake - the facts tools/check-layering.cmake checks, written at
# configure time: for every module library (dt_*) its folder and headers,
# and for every C target (libraries, binaries, suites, benches) its sources,
# the modules whose headers it may include (itself and what it links, as
# the compiler sees them: its own link libraries and what those pass on)
# and the internal/ folders it may reach (its own; a suite's INTERNAL ones).
# dt_layering_check() then runs the check on every build whose sources
# changed (target `layering`, part of `all`); tests/layering.cmake
# registers it with ctest.

# Every target defined under dir and its subdirectories.
function(dt_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    dt_collect_targets(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# The dt_* libraries whose headers target's sources see: its link
# libraries, then what each passes on (INTERFACE_LINK_LIBRARIES, without
# the LINK_ONLY ones, whose headers do not travel).
function(dt_visible_modules target out)
  get_target_property(todo ${target} LINK_LIBRARIES)
  set(seen "")
  if(NOT todo)
    set(todo "")
  endif()
  list(LENGTH todo left)
  while(left GREATER 0)
    list(POP_FRONT todo lib)
    if(lib MATCHES "^dt_" AND TARGET ${lib} AND NOT lib IN_LIST seen)
      list(APPEND seen ${lib})
      get_target_property(passed ${lib} INTERFACE_LINK_LIBRARIES)
      foreach(p ${passed})
        if(passed AND NOT p MATCHES "LINK_ONLY")
          list(APPEND todo ${p})
        endif()
      endforeach()
    endif()
    list(LENGTH todo left)
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(dt_layering_check)
  set(manifest ${PROJECT_BINARY_DIR}/layering_manifest.cmake)
  set(text "# Written by cmake/layering.cmake; read by tools/check-layering.cmake.\n")
  string(APPEND text "set(SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")\n")
  dt_collect_targets(${PROJECT_SOURCE_DIR} targets)
  set(modules "")
  set(checked "")
  set(depends ${PROJECT_SOURCE_DIR}/docs/hacking.md)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    get_target_property(dir ${t} SOURCE_DIR)
    get_target_property(srcs ${t} SOURCES)
    set(files "")
    foreach(s ${srcs})
      get_filename_component(abs ${s} ABSOLUTE BASE_DIR ${dir})
      if(abs MATCHES "\\.[ch]$" AND abs MATCHES "^${PROJECT_SOURCE_DIR}/" AND EXISTS ${abs})
        list(APPEND files ${abs})
      endif()
    endforeach()
    if(t MATCHES "^dt_" AND type STREQUAL "STATIC_LIBRARY")
      list(APPEND modules ${t})
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${dir})
      file(GLOB pub ${dir}/*.h)
      file(GLOB priv ${dir}/internal/*.h)
      # A module's own headers are checked with its sources.
      list(APPEND files ${pub} ${priv})
      string(APPEND text "set(MODULE_${t}_DIR \"${rel}\")\n")
      string(APPEND text "set(MODULE_${t}_HEADERS \"${pub}\")\n")
      string(APPEND text "set(MODULE_${t}_INTERNAL \"${priv}\")\n")
      # Its sources' names (two modules may share a folder: common/obs)
      # and the modules it links itself.
      set(stems "")
      foreach(f ${files})
        get_filename_component(stem ${f} NAME_WE)
        list(APPEND stems ${stem})
      endforeach()
      get_target_property(links ${t} LINK_LIBRARIES)
      set(direct "")
      foreach(l ${links})
        if(l MATCHES "^dt_" AND TARGET ${l})
          list(APPEND direct ${l})
        endif()
      endforeach()
      string(APPEND text "set(MODULE_${t}_STEMS \"${stems}\")\n")
      string(APPEND text "set(MODULE_${t}_LINKS \"${direct}\")\n")
      # Headers generated into the build tree, by the path they are
      # included with (proto: "dratopo/v1/").
      get_target_property(prefix ${t} DT_HEADER_PREFIX)
      if(prefix)
        string(APPEND text "set(MODULE_${t}_PREFIX \"${prefix}\")\n")
      endif()
    endif()
    if(NOT files)
      continue()
    endif()
    list(REMOVE_DUPLICATES files)
    list(APPEND depends ${files})
    dt_visible_modules(${t} visible)
    if(t MATCHES "^dt_")
      list(APPEND visible ${t})
    endif()
    # internal/ folders: a target's own; a suite's (tests/) those it names
    # INTERNAL (dt_add_suite puts them on its include path).
    set(internal "${dir}/internal")
    if(dir MATCHES "^${PROJECT_SOURCE_DIR}/tests")
      get_target_property(incs ${t} INCLUDE_DIRECTORIES)
      foreach(i ${incs})
        if(i MATCHES "/internal$")
          list(APPEND internal ${i})
        endif()
      endforeach()
    endif()
    list(APPEND checked ${t})
    string(APPEND text "set(TARGET_${t}_FILES \"${files}\")\n")
    string(APPEND text "set(TARGET_${t}_VISIBLE \"${visible}\")\n")
    string(APPEND text "set(TARGET_${t}_INTERNAL \"${internal}\")\n")
  endforeach()
  string(APPEND text "set(MODULES \"${modules}\")\nset(TARGETS \"${checked}\")\n")
  file(GENERATE OUTPUT ${manifest} CONTENT "${text}")

  set(script ${PROJECT_SOURCE_DIR}/tools/check-layering.cmake)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/layering.stamp
    COMMAND ${CMAKE_COMMAND} -DMANIFEST=${manifest} -P ${script}
    COMMAND ${CMAKE_COMMAND} -E touch ${PROJECT_BINARY_DIR}/layering.stamp
    DEPENDS ${script} ${manifest} ${depends}
    COMMENT "layering: includes against links, internal/ headers, docs/hacking.md's modules"
    VERBATIM)
  add_custom_target(layering ALL DEPENDS ${PROJECT_BINARY_DIR}/layering.stamp)
endfunction()
