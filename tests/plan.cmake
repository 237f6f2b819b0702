# Suites of the planner. test_plan_pack needs only the planner's pure parts
# (and quantities, through plan_fit.c); test_plan plans real manifests.
if(TARGET dt_plan AND TARGET dt_units)
  dt_add_suite(test_plan_pack
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_plan_pack.c
    LIBS dt_plan dt_units dt_base)
endif()
