package io.auditpipe.flink;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checks a reviewer makes of the job's structure, made by the build. */
class ArchitectureTest {
    static final JavaClasses JOB =
            new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPackages("io.auditpipe");

    @Test
    void theJobsPackagesDependOnEachOtherWithoutCycles() {
        slices().matching("io.auditpipe.flink.(*)..").should().beFreeOfCycles().check(JOB);
    }

    @Test
    void theParserLibrarysPackagesDependOnEachOtherWithoutCycles() {
        slices().matching("io.auditpipe.(*)..")
                .should()
                .beFreeOfCycles()
                .check(
                        new ClassFileImporter()
                                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                                .importPackages(
                                        "io.auditpipe.parser",
                                        "io.auditpipe.enrich",
                                        "io.auditpipe.reader"));
    }

    /**
     * Longest method of the topology and the wiring, in source lines: each part of the graph in a
     * method of its own.
     */
    static final int LONGEST_METHOD = 80;

    @Test
    void noMethodOfTheTopologyOrItsWiringIsLongerThanTheLimit() throws Exception {
        List<String> tooLong = new ArrayList<>();
        for (String name :
                List.of(
                        "AuditPipeline",
                        "JobWiring",
                        "AuditPipelineJob",
                        "PipelineSinks",
                        "PipelineSources")) {
            Path file = Path.of("src/main/java/io/auditpipe/flink/" + name + ".java");
            List<String> lines = Files.readAllLines(file);
            int start = -1;
            for (int i = 0; i < lines.size(); i++) {
                String l = lines.get(i);
                // a method's body starts on a line indented four spaces that ends with "{" and is
                // no class
                if (start < 0 && l.matches("    [a-zA-Z].*\\(.*\\{\\s*$") && !l.contains(" class "))
                    start = i;
                else if (start >= 0 && l.equals("    }")) {
                    if (i - start + 1 > LONGEST_METHOD)
                        tooLong.add(name + ":" + (start + 1) + " (" + (i - start + 1) + " lines)");
                    start = -1;
                }
            }
        }
        assertEquals(List.of(), tooLong);
    }
}
