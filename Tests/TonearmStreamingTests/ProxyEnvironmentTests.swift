import XCTest
import Tonearm

/// Which proxy the environment names for a URL, read as curl reads it: a URL with one goes
/// through URLSession (which uses it) instead of Tonearm's own client (which would not).
final class ProxyEnvironmentTests: XCTestCase {
    func proxy(_ url: String, _ environment: [String: String]) -> String? {
        HTTPStream.environmentProxy(for: url, environment: environment)
    }

    func testTheVariableForEachScheme() {
        let env = ["http_proxy": "http://p:3128", "https_proxy": "http://s:3128"]
        XCTAssertEqual(proxy("http://radio.example/live", env), "http://p:3128")
        XCTAssertEqual(proxy("https://radio.example/live", env), "http://s:3128")
        XCTAssertNil(proxy("http://radio.example/", [:]))
        // curl ignores HTTP_PROXY (a CGI header could set it); HTTPS_PROXY counts.
        XCTAssertNil(proxy("http://radio.example/", ["HTTP_PROXY": "http://p:1"]))
        XCTAssertEqual(proxy("https://radio.example/", ["HTTPS_PROXY": "http://s:1"]), "http://s:1")
        XCTAssertEqual(proxy("https://radio.example/", ["ALL_PROXY": "socks5://a:1"]), "socks5://a:1")
        XCTAssertEqual(proxy("http://radio.example/", ["all_proxy": "http://a:1", "http_proxy": "http://p:1"]), "http://p:1")
        XCTAssertNil(proxy("http://radio.example/", ["http_proxy": "  "]), "an empty value names none")
        XCTAssertNil(proxy("ftp://radio.example/", ["all_proxy": "http://a:1"]))
    }

    func testNoProxyExcludesHostsAndDomains() {
        var env = ["https_proxy": "http://s:3128", "no_proxy": "localhost, .internal.example,127.0.0.1,[::1]"]
        XCTAssertNil(proxy("https://localhost:8443/a", env))
        XCTAssertNil(proxy("https://127.0.0.1/a", env))
        XCTAssertNil(proxy("https://[::1]:8000/a", env))
        XCTAssertNil(proxy("https://radio.internal.example/a", env))
        XCTAssertNil(proxy("https://internal.example/a", env))
        XCTAssertEqual(proxy("https://notinternal.example/a", env), "http://s:3128", "a suffix that is not a domain")
        XCTAssertEqual(proxy("https://radio.example/a", env), "http://s:3128")
        env["no_proxy"] = "*"
        XCTAssertNil(proxy("https://radio.example/a", env))
        XCTAssertNil(proxy("https://RADIO.example/a", ["https_proxy": "http://s:1", "NO_PROXY": "radio.EXAMPLE"]))
    }
}
