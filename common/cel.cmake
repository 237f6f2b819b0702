# dt_cel: the CEL language (lexer, parser, checker, evaluator, standard
# library, cost meter, cache) and the DRA selector environment. The
# Kubernetes/extension libraries are the cel_lib_*.c files present: each is
# compiled in and enabled through CEL_HAVE_LIB_<NAME> (see cel_lib.h).
file(GLOB DT_CEL_LIB_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cel_lib_*.c)
# Leaves the regex library out, to test the core's own matches() (cel_std.c).
option(DRATOPO_CEL_WITHOUT_REGEX "build dt_cel without common/cel_lib_regex.c" OFF)
if(DRATOPO_CEL_WITHOUT_REGEX)
  list(FILTER DT_CEL_LIB_SOURCES EXCLUDE REGEX "/cel_lib_regex\\.c$")
endif()
add_library(dt_cel STATIC
  ${CMAKE_CURRENT_LIST_DIR}/cel_value.c
  ${CMAKE_CURRENT_LIST_DIR}/cel_print.c
  ${CMAKE_CURRENT_LIST_DIR}/cel_lex.c
  ${CMAKE_CURRENT_LIST_DIR}/cel_parse.c
  ${CMAKE_CURRENT_LIST_DIR}/cel_check.c
  ${CMAKE_CURRENT_LIST_DIR}/cel_eval.c
  ${CMAKE_CURRENT_LIST_DIR}/cel_std.c
  ${CMAKE_CURRENT_LIST_DIR}/cel_time.c
  ${CMAKE_CURRENT_LIST_DIR}/cel_cost.c
  ${CMAKE_CURRENT_LIST_DIR}/cel_cache.c
  ${CMAKE_CURRENT_LIST_DIR}/cel_env.c
  ${DT_CEL_LIB_SOURCES})
foreach(_src ${DT_CEL_LIB_SOURCES})
  get_filename_component(_name ${_src} NAME_WE)
  string(REGEX REPLACE "^cel_lib_" "" _name ${_name})
  string(TOUPPER ${_name} _name)
  set_property(SOURCE ${CMAKE_CURRENT_LIST_DIR}/cel_env.c APPEND PROPERTY
               COMPILE_DEFINITIONS CEL_HAVE_LIB_${_name})
endforeach()
target_include_directories(dt_cel PUBLIC ${PROJECT_SOURCE_DIR}/common)
# dt_units (quantity, semver) may be defined by a later fragment.
target_link_libraries(dt_cel PUBLIC $<TARGET_NAME_IF_EXISTS:dt_units> dt_base
                      PkgConfig::PCRE2 Threads::Threads m)
if(DRATOPO_FUZZ)
  # Coverage feedback for tests/fuzz/fuzz_cel.c.
  target_compile_options(dt_cel PRIVATE -fsanitize=fuzzer-no-link)
endif()
