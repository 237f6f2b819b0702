# Suites of the hwdb module: the compiled tables against the reference
# facts, extras, PCI ids, consumable capacity, the generated slices; and the
# end-to-end check that every `dratopo hwdb show` output validates.
dt_add_suite(test_hwdb SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_hwdb.c
             LIBS dt_hwdb dt_model dt_doc dt_units dt_base INTERNAL hwdb)
dt_add_script_test(e2e_hwdb ${CMAKE_CURRENT_LIST_DIR}/e2e/hwdb.sh)
dt_add_script_test(e2e_mig ${CMAKE_CURRENT_LIST_DIR}/e2e/mig.sh)
dt_add_suite(test_hwdb_mig SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_hwdb_mig.c
             LIBS dt_hwdb dt_model dt_doc dt_units dt_base INTERNAL hwdb)
