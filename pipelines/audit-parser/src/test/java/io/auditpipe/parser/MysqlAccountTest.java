package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Reading an account by index gives what the expression gives, on strings made of its delimiters.
 */
class MysqlAccountTest {
    @Provide
    Arbitrary<String> accounts() {
        Arbitrary<String> piece =
                Arbitraries.of(
                        "a", "root", "[", "]", " ", "@", "] @ ", " [", "\n", "10.0.0.5", "x y");
        Arbitrary<String> random =
                piece.list().ofMinSize(0).ofMaxSize(12).map(l -> String.join("", l));
        Arbitrary<String> shaped =
                piece.list()
                        .ofMaxSize(3)
                        .map(l -> String.join("", l))
                        .list()
                        .ofSize(4)
                        .map(
                                p ->
                                        p.get(0) + "[" + p.get(1) + "] @ " + p.get(2) + " ["
                                                + p.get(3) + "]");
        return Arbitraries.oneOf(random, shaped);
    }

    @Property(tries = 5000)
    void byIndexFindsWhatTheExpressionFinds(@ForAll("accounts") String text) {
        String expected = String.valueOf(MysqlAccount.byExpression(text));
        assertEquals(expected, String.valueOf(MysqlAccount.parse(text)), text);
        MysqlAccount fast = MysqlAccount.byIndex(text);
        if (fast != null) {
            assertEquals(expected, fast.toString(), text);
        }
    }
}
