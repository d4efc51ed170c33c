/** Word lists for random_pet (a small built-in selection in the spirit of the upstream provider's). */
export const ADVERBS = [
  "badly", "bravely", "briefly", "calmly", "carefully", "cleanly", "closely", "deeply", "eagerly", "easily",
  "evenly", "fairly", "firmly", "freely", "gently", "gladly", "greatly", "happily", "highly", "honestly",
  "kindly", "largely", "lightly", "loudly", "mainly", "merely", "mildly", "neatly", "nicely", "openly",
  "partly", "politely", "quickly", "quietly", "rapidly", "really", "simply", "slowly", "smoothly", "softly",
  "solely", "surely", "sweetly", "truly", "vastly", "warmly", "wholly", "widely", "wildly", "wisely",
];
export const ADJECTIVES = [
  "able", "active", "adapted", "amazed", "amused", "apt", "bold", "brave", "bright", "busy",
  "calm", "capital", "careful", "casual", "civil", "clean", "clever", "close", "cool", "cosmic",
  "crisp", "curious", "daring", "deep", "eager", "easy", "epic", "exact", "fair", "fast",
  "fine", "firm", "fit", "fond", "free", "fresh", "gentle", "glad", "golden", "good",
  "grand", "happy", "hardy", "helpful", "honest", "humble", "ideal", "jolly", "keen", "kind",
  "lively", "loyal", "lucky", "merry", "mighty", "modest", "neat", "nice", "noble", "open",
  "patient", "polite", "proud", "quick", "quiet", "rapid", "ready", "refined", "rich", "robust",
  "sharp", "shiny", "smart", "smooth", "solid", "steady", "still", "strong", "sunny", "super",
  "sure", "sweet", "swift", "tidy", "tender", "true", "trusty", "upright", "valid", "vital",
  "warm", "wise", "witty", "worthy", "young", "zesty",
];
export const NAMES = [
  "aardvark", "alpaca", "ant", "badger", "bat", "beagle", "bear", "beaver", "bee", "bison",
  "boar", "bobcat", "buffalo", "camel", "cat", "cheetah", "chicken", "cobra", "colt", "condor",
  "crab", "crane", "cricket", "crow", "deer", "dingo", "dog", "dolphin", "dove", "duck",
  "eagle", "eel", "elk", "falcon", "ferret", "finch", "fox", "frog", "gannet", "gecko",
  "gibbon", "giraffe", "goat", "goose", "gopher", "grouse", "gull", "hare", "hawk", "hen",
  "heron", "horse", "hound", "husky", "ibex", "iguana", "impala", "jackal", "jaguar", "jay",
  "kid", "kingfish", "kite", "koala", "lamb", "lark", "lemur", "leopard", "lion", "lizard",
  "llama", "lobster", "lynx", "macaw", "mako", "marmot", "mink", "mole", "monkey", "moose",
  "mouse", "mule", "newt", "ocelot", "octopus", "orca", "osprey", "otter", "owl", "panda",
  "panther", "parrot", "pelican", "penguin", "pig", "pony", "puma", "quail", "rabbit", "raven",
  "reindeer", "robin", "salmon", "seal", "shark", "sheep", "shrew", "skink", "sloth", "snail",
  "sparrow", "squid", "stork", "swan", "tapir", "termite", "tiger", "toad", "trout", "turkey",
  "turtle", "urchin", "viper", "vulture", "walrus", "wasp", "weasel", "whale", "wolf", "wombat",
  "wren", "yak", "zebra",
];
