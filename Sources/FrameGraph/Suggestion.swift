/// The closest of `candidates` to `word` by edit distance, if it is close enough to be a likely typo.
public func suggestion(for word: String, in candidates: [String]) -> String? {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1]
            for (j, cb) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
    let scored = candidates.map { ($0, distance(Array(word.lowercased()), Array($0.lowercased()))) }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, word.count / 3) else { return nil }
    return best.0
}

/// " (did you mean 'x'?)" or "".
public func didYouMean(_ word: String, _ candidates: [String]) -> String {
    suggestion(for: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
}
