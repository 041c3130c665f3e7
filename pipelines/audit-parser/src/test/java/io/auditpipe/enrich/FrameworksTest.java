package io.auditpipe.enrich;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The frameworks' tables as the job reads them from its jar (docs/compliance.md "Frameworks"). */
class FrameworksTest {
    @Test
    void aRuleServesWhatItsControlsServeAndWhatItsOwnRowsAdd() {
        Map<String, List<String>> got =
                Frameworks.shared()
                        .of(
                                "brute_force",
                                List.of("PCI-DSS-10.2.1.4", "HIPAA-164.308(a)(5)(ii)(C)"));
        assertEquals(
                List.of(
                        "pci-dss-v4",
                        "pci-dss-v3",
                        "hipaa",
                        "nist-800-53",
                        "soc2",
                        "gdpr",
                        "mitre-attack"),
                List.copyOf(got.keySet()),
                "frameworks in the requirements table's order");
        assertEquals(List.of("10.2.1.4"), got.get("pci-dss-v4"));
        assertEquals(List.of("10.2.4"), got.get("pci-dss-v3"));
        assertEquals(
                List.of("AC-7", "AU-2", "AU-6"),
                got.get("nist-800-53"),
                "ids in the table's order, each once");
        assertEquals(List.of("T1110.001"), got.get("mitre-attack"));
    }

    @Test
    void aSubjectWithoutRowsServesNothingAndABadRowIsNamed() {
        assertTrue(Frameworks.shared().of("no_such_rule", List.of()).isEmpty());
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                Frameworks.parse(
                                        "framework,id,requirement\nnist-800-53,AU-2,Event Logging\n",
                                        "subject,framework,ids\nbrute_force,nist-800-53,AU-2|AU-99\n"));
        assertEquals(
                "framework-map.csv: brute_force -> nist-800-53 AU-99 is not in framework-requirements.csv",
                e.getMessage());
    }
}
