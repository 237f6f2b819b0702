# Suites of the planner. test_plan_pack needs only the planner's pure parts
# (and quantities, through plan_fit.c); test_plan plans real manifests.
if(TARGET dt_plan AND TARGET dt_units)
  dt_add_suite(test_plan_pack
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_plan_pack.c
    LIBS dt_plan dt_units dt_base)
endif()
if(TARGET dt_plan AND TARGET dt_alloc AND TARGET dt_hwdb AND TARGET dt_cel AND TARGET dt_model)
  dt_add_suite(test_plan
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_plan.c
    LIBS dt_plan dt_hwdb dt_alloc dt_model dt_cel dt_doc dt_units dt_base)
endif()
if(TARGET dt_plan AND TARGET dt_cel AND TARGET dt_hwdb)
  dt_add_script_test(plan_e2e ${CMAKE_CURRENT_LIST_DIR}/e2e/plan.sh)
endif()
