package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * schemas/job-contract.json is what {@code AuditPipelineJob --print-contract} prints now. Run with
 * {@code -Dauditpipe.contract.write=true} to write it anew (the CLI's unit tests then check the CLI
 * against it).
 */
class JobContractTest {
    static final Path FILE = Path.of("../..").resolve(JobContract.FILE);

    @Test
    void theContractFileIsCurrent() throws Exception {
        String now = JobContract.json();
        if (Boolean.getBoolean("auditpipe.contract.write")) {
            Files.writeString(FILE, now);
        }
        assertEquals(
                now,
                Files.exists(FILE) ? Files.readString(FILE) : "",
                JobContract.FILE
                        + " is stale: write it anew with `mvn -q -f pipelines/pom.xml -pl flink-job -am test"
                        + " -Dtest=JobContractTest -Dsurefire.failIfNoSpecifiedTests=false -Dauditpipe.contract.write=true`");
    }
}
