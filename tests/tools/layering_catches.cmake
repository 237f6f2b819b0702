# layering_catches.cmake - test `layering_catches`: tools/check-layering.cmake
# on a tree that breaks each of its rules (tests/fixtures/layering) must
# fail and name every break.
#   cmake -DCHECK=tools/check-layering.cmake -DFIXTURE=tests/fixtures/layering -P this
execute_process(COMMAND ${CMAKE_COMMAND} -DMANIFEST=${FIXTURE}/manifest.cmake -P ${CHECK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(APPEND out "${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the check passed a tree that breaks its rules:\n${out}")
endif()
foreach(want
    "a/a.c: includes \"b.h\" of dt_b, which dt_a does not link"
    "a/a.c: includes \"c_internal.h\", an internal/ header of dt_c (dt_a may not)"
    "header common.h is in both dt_b and dt_c"
    "the table puts dt_c in cc/, but it is in c/"
    "dt_b (b/) is missing from the module table"
    "dt_b's folder (b) is missing from the layer picture"
    "dt_b is missing from the list of links"
    "a links c (besides base), the list of links says b")
  string(FIND "${out}" "${want}" at)
  if(at LESS 0)
    message(FATAL_ERROR "the check did not say: ${want}\nit said:\n${out}")
  endif()
endforeach()
foreach(unwanted "a/a.c: includes \"c.h\"" "c/c.c:")
  string(FIND "${out}" "${unwanted}" at)
  if(NOT at LESS 0)
    message(FATAL_ERROR "the check refused an allowed include (${unwanted}):\n${out}")
  endif()
endforeach()
