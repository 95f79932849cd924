/**
 * "You forgot" complaints: a user turn telling the agent it should have remembered something.
 * Deliberately narrow phrasings (a complaint is a signal to count, so a missed one costs less
 * than a narrative "I told my son" counted as one). English and Chinese (simplified and
 * traditional).
 */
const PATTERNS: RegExp[] = [
  // you forgot / you've forgotten / you forget everything / did you forget
  /\byou(?:'ve| have)? (?:already |just |completely |totally )?(?:forgot|forgotten)\b/i,
  /\byou (?:always |keep |just )?forget(?:ting)?\b/i,
  /\bdid you forget\b/i,
  // I already told you / I've told you / I told you before / I said that already
  /\bi (?:already|just) (?:told|said|mentioned|explained)\b/i,
  /\bi(?:'ve| have) (?:already )?(?:told you|(?:said|mentioned|explained) (?:this|that|it))\b/i,
  /\bi (?:told|said|mentioned|explained) (?:you |this |that |it )?(?:before|already|earlier|last time)\b/i,
  /\b(?:as|like) i (?:already )?(?:said|told you|mentioned)\b/i,
  /\bhow many times (?:do|have|must|should) i\b/i,
  // don't you remember / you don't remember / you never remember
  /\b(?:don't|do not|didn't|did not) you remember\b/i,
  /\byou (?:don't|do not|didn't|did not|never|can't|cannot) remember\b/i,
  /\bi (?:told|already told) you (?:that|this|about)\b/i,
  // 我说过 / 我已经告诉过你 / 我跟你讲过 / 我之前提过
  /我(?:已经|早就|之前|以前|刚才|刚刚|明明|不是)?(?:跟你|和你|對你|对你)?(?:[说說讲講]过|[说說讲講]過|告[诉訴]过你?|告[诉訴]過你?|提[过過]|提到[过過])/,
  // 你忘了 / 你又忘记了 / 你怎么忘了
  /你(?:又|怎么|怎麼|竟然|是不是|都)?忘(?:了|[记記]了|[记記]|掉了)/,
  // 你不记得了吗 / 你没记住
  /你(?:不|没|沒|都不)[记記](?:得|住)/,
  /不是(?:[说說]过|[说說]過|告[诉訴]过你|告[诉訴]過你)/,
];

/** True when a user turn complains that the agent forgot what it was told. */
export function isForgotComplaint(text: string): boolean {
  const t = text.normalize('NFKC').replace(/[\u2018\u2019\u02bc]/g, "'");
  return PATTERNS.some((p) => p.test(t));
}
