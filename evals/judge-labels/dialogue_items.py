"""Knowledge-grounded chat replies, written by hand, labelled by their construction (see build.py).

Per snippet: the user's chat message (``q``), a short encyclopedic knowledge snippet the
assistant was shown (``ev``, 1-3 sentences), and two to four replies, each with its kind.
Unlike travel_items.py and general_items.py this set is NOT adversarial: the replies are
written the way knowledge-grounded chat replies usually come, so word overlap is expected
to separate much of it (it stands in for a random sample of such replies, not for the
overlap-matched pairs).

Labelling rule (faithfulness only; no reference answer):
a reply is **attributable** (good) when all the information it conveys about the world is
supported by the snippet (the user's message may be echoed). Chatty framing ("Oh nice!",
"Good luck!"), greetings and questions back to the user carry no information and do not
make a reply unattributable. Anything else is **unattributable** (bad): an invented extra
fact (even a true one the snippet does not give), a personal experience, habit or taste
stated by the assistant ("I saw it last year"), a wrong number, name or date, a
contradiction of the snippet, or a reply that drifts to a related topic the snippet does
not cover.

Kinds: ``restate`` (good: the snippet's words, often wrapped in chatty framing or with a
question back), ``para`` (good: a paraphrase), ``invent`` (bad: the snippet plus or instead
of a fact it does not give), ``personal`` (bad: a personal experience or opinion stated as
fact), ``wrong`` (bad: a wrong number, name or date), ``contra`` (bad: contradicts the
snippet), ``drift`` (bad: a related topic the snippet does not cover). Labels were written
with the replies, before any measurement. Replies that convey nothing at all ("Cool, do you
like it?") are left out: public labellings treat them inconsistently.
"""

SNIPPETS = [
    dict(id="jazz", q="I love jazz, do you?",
         ev="Jazz is a music genre that originated in the African-American communities of New Orleans, Louisiana, "
            "in the late 19th and early 20th centuries. It developed from roots in blues and ragtime.",
         replies=[
             ("restate", "Oh, jazz! It originated in the African-American communities of New Orleans in the late 19th "
                         "and early 20th centuries. Do you have a favourite musician?"),
             ("personal", "I do! I saw a jazz band in New Orleans last summer and the whole street was dancing."),
             ("para", "It grew out of blues and ragtime, first appearing among Black communities in New Orleans "
                      "around the turn of the twentieth century."),
         ]),
    dict(id="tour", q="Who started the Tour de France?",
         ev="The Tour de France is an annual men's multiple-stage bicycle race primarily held in France. "
            "It was first organized in 1903 to increase sales for the newspaper L'Auto.",
         replies=[
             ("restate", "It was first organized in 1903 to increase sales for the newspaper L'Auto, so it began "
                         "as a way to sell newspapers!"),
             ("wrong", "It was first organized in 1910 by the newspaper Le Monde to boost its sales."),
             ("invent", "The newspaper L'Auto started it in 1903; its editor Henri Desgrange wanted a race around "
                        "the whole country."),
         ]),
    dict(id="bees", q="Bees are fascinating. How does a hive work?",
         ev="The western honey bee is the most common of the honey bee species worldwide. A colony generally contains "
            "one breeding female, or queen, a few thousand males, or drones, and tens of thousands of sterile female workers.",
         replies=[
             ("restate", "A colony generally has one queen, a few thousand drones, and tens of thousands of sterile "
                         "female workers. Pretty organised, right?"),
             ("contra", "A colony usually has several queens that share the egg laying, plus thousands of male workers."),
             ("para", "There's a single breeding female, the queen, then some thousands of males called drones, and by "
                      "far the biggest group: tens of thousands of female workers who can't reproduce."),
         ]),
    dict(id="everest", q="Have you ever thought about climbing Everest?",
         ev="Mount Everest is Earth's highest mountain above sea level, located in the Mahalangur Himal sub-range of "
            "the Himalayas. The China-Nepal border runs across its summit point.",
         replies=[
             ("personal", "I'd love to! My cousin climbed it in 2019 and said the last stretch took him nine hours."),
             ("restate", "That would be quite a challenge! Everest is Earth's highest mountain above sea level, and the "
                         "China-Nepal border runs right across its summit."),
             ("drift", "Maybe! Most climbers need bottled oxygen above 8,000 metres, and the best season is in May."),
         ]),
    dict(id="pizza", q="What's your favourite food? Mine's pizza.",
         ev="Pizza is a dish of Italian origin consisting of a usually round, flat base of leavened wheat-based dough "
            "topped with tomatoes, cheese, and often various other ingredients, which is then baked at a high "
            "temperature, traditionally in a wood-fired oven.",
         replies=[
             ("restate", "Pizza, nice! A round, flat base of leavened dough topped with tomatoes and cheese, baked at a "
                         "high temperature, traditionally in a wood-fired oven. What toppings do you like?"),
             ("invent", "Pizza is great! The margherita was created in Naples in 1889 to honour Queen Margherita."),
             ("para", "Good choice. It comes from Italy: leavened wheat dough shaped into a flat disc, covered with "
                      "tomato and cheese and often more, and cooked very hot, classically in an oven fired with wood."),
         ]),
    dict(id="greatwall", q="Is the Great Wall really one long wall?",
         ev="The Great Wall of China is a series of fortifications that were built across the historical northern "
            "borders of ancient Chinese states and Imperial China as protection against various nomadic groups from "
            "the Eurasian Steppe.",
         replies=[
             ("restate", "Not exactly! The Great Wall of China is a series of fortifications built across the "
                         "historical northern borders of ancient Chinese states and Imperial China."),
             ("contra", "Yes, it is one continuous wall, and you can see it from space with the naked eye."),
             ("wrong", "It's a series of fortifications, built mainly to protect China against Japanese invaders "
                       "coming from the sea."),
         ]),
    dict(id="octopus", q="Tell me something weird about octopuses.",
         ev="Octopuses have three hearts: two pump blood through the gills, while the third circulates it through the "
            "rest of the body. Their blood contains the copper-rich protein hemocyanin, which makes it blue.",
         replies=[
             ("restate", "Octopuses have three hearts! Two pump blood through the gills and the third circulates it "
                         "through the rest of the body."),
             ("para", "Their blood is actually blue, thanks to a protein full of copper called hemocyanin."),
             ("wrong", "They have two hearts, and their blood is green because of the iron in it."),
             ("invent", "Octopuses have three hearts, and they can also taste things with their suckers."),
         ]),
    dict(id="beatles", q="Do you like the Beatles?",
         ev="The Beatles were an English rock band formed in Liverpool in 1960. The core lineup of the band comprised "
            "John Lennon, Paul McCartney, George Harrison and Ringo Starr.",
         replies=[
             ("restate", "Oh, the Beatles! An English rock band formed in Liverpool in 1960, with John Lennon, Paul "
                         "McCartney, George Harrison and Ringo Starr. Which album is your favourite?"),
             ("personal", "Yes! I went to the Cavern Club in Liverpool and saw where they played their first gigs."),
             ("wrong", "The Beatles formed in Manchester in 1962, with John Lennon, Paul McCartney, George Harrison "
                       "and Ringo Starr."),
         ]),
    dict(id="photosynthesis", q="How do plants eat?",
         ev="Photosynthesis is the process by which plants and other organisms convert light energy into chemical "
            "energy. Most plants release oxygen as a by-product.",
         replies=[
             ("para", "In a way they feed on light: through photosynthesis they turn the energy of light into chemical "
                      "energy, and most of them give off oxygen while doing it."),
             ("invent", "Through photosynthesis! They convert light energy into chemical energy, and they take most of "
                        "their food from the soil through their roots."),
             ("restate", "Through photosynthesis, the process by which plants convert light energy into chemical "
                         "energy. Most plants release oxygen as a by-product."),
         ]),
    dict(id="eiffel", q="I'm going to Paris next month!",
         ev="The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is named after "
            "the engineer Gustave Eiffel, whose company designed and built the tower between 1887 and 1889.",
         replies=[
             ("restate", "How exciting! You might see the Eiffel Tower, the wrought-iron lattice tower on the Champ de "
                         "Mars, named after the engineer Gustave Eiffel."),
             ("personal", "Lucky you! I went up the Eiffel Tower last year and the queue for the lift took two hours."),
             ("drift", "Have fun! The Louvre is the most visited museum in the world, so book your tickets early."),
             ("wrong", "Nice! The Eiffel Tower was built out of steel in the 1920s by the architect Le Corbusier."),
         ]),
    dict(id="marathon", q="I'm training for my first marathon.",
         ev="The marathon is a long-distance foot race with a distance of 42.195 kilometres. The event was instituted "
            "in commemoration of the fabled run of the Greek soldier Pheidippides from the battlefield of Marathon to Athens.",
         replies=[
             ("restate", "Good luck! It's 42.195 kilometres, a distance that commemorates the fabled run of the Greek "
                         "soldier Pheidippides from Marathon to Athens."),
             ("wrong", "Good luck! A marathon is 40 kilometres, named after the run of the Roman soldier Pheidippides."),
             ("drift", "Good luck! Most beginners finish in four to five hours, so pace yourself and eat plenty of "
                       "pasta the night before."),
         ]),
    dict(id="coffee", q="I can't start my day without coffee.",
         ev="Coffee is a beverage brewed from roasted coffee beans. The genus Coffea is native to tropical Africa and "
            "Madagascar, and the earliest credible evidence of coffee drinking comes from 15th-century Yemen.",
         replies=[
             ("para", "Ha, understandable! Funny to think the plant it comes from, Coffea, is originally from tropical "
                      "Africa and Madagascar, and people in Yemen were already drinking it in the 1400s."),
             ("invent", "Coffee is brewed from roasted beans, and it was discovered by an Ethiopian goat herder named "
                        "Kaldi who saw his goats dancing."),
             ("personal", "Me neither! I drink three espressos every morning before work."),
         ]),
    dict(id="penguins", q="Do penguins live at the North Pole?",
         ev="Penguins are a group of aquatic flightless birds living almost exclusively in the Southern Hemisphere. "
            "Only one species, the Galapagos penguin, is found north of the Equator.",
         replies=[
             ("restate", "No, penguins live almost exclusively in the Southern Hemisphere. Only the Galapagos penguin "
                         "is found north of the Equator."),
             ("contra", "Yes, a few species live in the Arctic, but most of them are in Antarctica."),
             ("para", "Not really: nearly all of them are in the southern half of the globe, and the only kind that "
                      "makes it north of the Equator is the Galapagos penguin."),
         ]),
    dict(id="monalisa", q="Why is the Mona Lisa so famous?",
         ev="The Mona Lisa is a half-length portrait painting by Italian artist Leonardo da Vinci. It has been "
            "described as the best known, the most visited, the most written about, the most sung about, and the "
            "most parodied work of art in the world.",
         replies=[
             ("restate", "It's by Leonardo da Vinci, and it has been described as the best known, most visited, most "
                         "written about and most parodied work of art in the world."),
             ("invent", "It became really famous after it was stolen from the Louvre in 1911 and was missing for two years."),
             ("wrong", "It's a full-length portrait by Michelangelo, and the most parodied painting ever."),
         ]),
    dict(id="vesuvius", q="I've always wanted to see Pompeii.",
         ev="Mount Vesuvius is a volcano on the Gulf of Naples in Campania, Italy. Its eruption in AD 79 destroyed "
            "the Roman cities of Pompeii and Herculaneum.",
         replies=[
             ("restate", "Oh, that would be a great trip! Pompeii was destroyed, along with Herculaneum, by the "
                         "eruption of Mount Vesuvius in AD 79."),
             ("personal", "You should! I walked around Pompeii for a whole day and the plaster casts of the victims "
                          "were haunting."),
             ("wrong", "Mount Vesuvius erupted in AD 89 and buried both Pompeii and Rome."),
         ]),
    dict(id="chess", q="I'm trying to learn chess, any tips?",
         ev="Chess is a board game for two players, played on a chessboard with 64 squares arranged in an "
            "eight-by-eight grid. Each player begins with 16 pieces: one king, one queen, two rooks, two knights, "
            "two bishops, and eight pawns.",
         replies=[
             ("restate", "Start with the basics: the board has 64 squares in an eight-by-eight grid, and each player "
                         "begins with 16 pieces: one king, one queen, two rooks, two knights, two bishops and eight pawns."),
             ("drift", "Control the centre early and castle your king within the first ten moves; that's what most "
                       "coaches teach."),
             ("wrong", "Each player begins with 18 pieces, including three bishops and eight pawns, on a board of 64 squares."),
         ]),
    dict(id="amazon", q="What's the biggest river?",
         ev="The Amazon River in South America is the largest river by discharge volume of water in the world. "
            "It flows through Peru, Colombia and Brazil before emptying into the Atlantic Ocean.",
         replies=[
             ("restate", "By discharge volume, it's the Amazon River in South America, the largest in the world. It "
                         "flows through Peru, Colombia and Brazil into the Atlantic."),
             ("invent", "The Amazon is the largest by discharge, and it's home to the pink river dolphin and over "
                        "3,000 species of fish."),
             ("para", "If you measure how much water flows, the Amazon wins. It crosses Peru, Colombia and Brazil and "
                      "ends in the Atlantic."),
             ("contra", "The Amazon flows through Peru, Colombia and Brazil and empties into the Pacific Ocean."),
         ]),
    dict(id="sushi", q="Is sushi just raw fish?",
         ev="Sushi is a Japanese dish of prepared vinegared rice, usually with some sugar and salt, accompanied by a "
            "variety of ingredients, such as seafood, often raw, and vegetables.",
         replies=[
             ("restate", "Not quite! Sushi is vinegared rice, usually with some sugar and salt, accompanied by "
                         "ingredients like seafood, often raw, and vegetables."),
             ("contra", "Pretty much, yes: sushi is basically raw fish, and the rice is optional."),
             ("personal", "No, and honestly the best sushi I ever had was a vegetable roll at a tiny place in Osaka."),
         ]),
    dict(id="basketball", q="Who invented basketball?",
         ev="Basketball was invented in 1891 by James Naismith, a Canadian-American physical education teacher, in "
            "Springfield, Massachusetts. The first game used a soccer ball and two peach baskets as goals.",
         replies=[
             ("restate", "James Naismith, a Canadian-American physical education teacher, invented it in 1891 in "
                         "Springfield, Massachusetts. The first game even used peach baskets as goals!"),
             ("wrong", "James Naismith invented it in 1901 in Boston, using a volleyball and two peach baskets."),
             ("para", "A PE teacher called James Naismith came up with it in Springfield, Massachusetts, back in 1891; "
                      "the first goals were two peach baskets, and they played with a soccer ball."),
             ("invent", "James Naismith invented it in 1891, and he wrote the 13 original rules of the game."),
         ]),
    dict(id="moon", q="When did people first land on the Moon?",
         ev="Apollo 11 was the spaceflight that first landed humans on the Moon. Commander Neil Armstrong and lunar "
            "module pilot Buzz Aldrin landed the Apollo Lunar Module Eagle on July 20, 1969.",
         replies=[
             ("restate", "On July 20, 1969! Neil Armstrong and Buzz Aldrin landed the lunar module Eagle during the "
                         "Apollo 11 mission."),
             ("invent", "July 20, 1969, with Apollo 11. Around 650 million people watched it live on television."),
             ("drift", "The last people to walk on the Moon were the Apollo 17 crew in 1972, and nobody has been back since."),
         ]),
    dict(id="tea", q="Are you more of a tea or coffee person?",
         ev="Tea is an aromatic beverage prepared by pouring hot or boiling water over cured or fresh leaves of "
            "Camellia sinensis, an evergreen shrub native to East Asia. After water, it is the most widely consumed "
            "drink in the world.",
         replies=[
             ("para", "Tea is hard to ignore: only water is drunk more widely around the world. It's just hot water "
                      "poured over leaves of Camellia sinensis, an evergreen bush from East Asia."),
             ("personal", "Tea, definitely. I drink green tea every afternoon and it helps me focus."),
             ("restate", "Did you know that after water, tea is the most widely consumed drink in the world? Which "
                         "one do you prefer?"),
         ]),
    dict(id="giraffe", q="What's the tallest animal?",
         ev="The giraffe is a large African hoofed mammal. It is the tallest living terrestrial animal and the "
            "largest ruminant on Earth.",
         replies=[
             ("restate", "The giraffe! It's the tallest living terrestrial animal and also the largest ruminant on Earth."),
             ("invent", "The giraffe, which can grow up to 5.5 metres tall and only sleeps about two hours a day."),
             ("para", "On land it's the giraffe, the big hoofed African mammal; it's also the largest of all ruminants."),
         ]),
    dict(id="shakespeare", q="Have you read any Shakespeare?",
         ev="William Shakespeare was an English playwright, poet and actor, widely regarded as the greatest writer in "
            "the English language. His plays have been translated into every major living language.",
         replies=[
             ("personal", "Yes, Hamlet is my favourite; I read it at school and then saw it performed at the Globe."),
             ("restate", "Shakespeare is widely regarded as the greatest writer in the English language, and his plays "
                         "have been translated into every major living language. Do you have a favourite play?"),
             ("invent", "He wrote 39 plays and 154 sonnets, and was born in Stratford-upon-Avon in 1564."),
         ]),
    dict(id="olympics", q="When were the first modern Olympics?",
         ev="The modern Olympic Games are leading international sporting events featuring summer and winter sports "
            "competitions. The first modern Olympics were held in Athens in 1896.",
         replies=[
             ("restate", "The first modern Olympics were held in Athens in 1896."),
             ("wrong", "The first modern Olympics were held in Paris in 1900."),
             ("para", "Athens hosted the first ones, in 1896. These days the Games cover both summer and winter sports."),
             ("invent", "In Athens in 1896, with about 240 athletes from 14 nations, all of them men."),
         ]),
    dict(id="web", q="Who invented the web?",
         ev="The World Wide Web was invented by English computer scientist Tim Berners-Lee while working at CERN in "
            "1989. The first website went online in 1991.",
         replies=[
             ("restate", "Tim Berners-Lee, an English computer scientist, invented it while working at CERN in 1989. "
                         "The first website went online in 1991."),
             ("contra", "The web was invented by the US military in the 1960s; it started as ARPANET."),
             ("para", "A British computer scientist, Tim Berners-Lee, came up with it at CERN in 1989, and two years "
                      "later the very first website was up."),
         ]),
    dict(id="sahara", q="Is the Sahara the biggest desert?",
         ev="The Sahara is a desert spanning North Africa. With an area of 9,200,000 square kilometres, it is the "
            "largest hot desert in the world and the third-largest desert overall, after Antarctica and the Arctic.",
         replies=[
             ("restate", "It's the largest hot desert in the world, but only the third-largest desert overall, after "
                         "Antarctica and the Arctic."),
             ("contra", "Yes, at 9,200,000 square kilometres it's the biggest desert on Earth."),
             ("para", "Among hot deserts, yes. Counting cold ones too, it comes third, behind Antarctica and the "
                      "Arctic; it covers about 9.2 million square kilometres of North Africa."),
         ]),
    dict(id="titanic", q="Have you seen Titanic?",
         ev="Titanic is a 1997 American epic romance and disaster film directed by James Cameron. It stars Leonardo "
            "DiCaprio and Kate Winslet, and won 11 Academy Awards, including Best Picture.",
         replies=[
             ("personal", "Yes, I cried at the end! I saw it in the cinema three times."),
             ("restate", "Titanic, the 1997 James Cameron film with Leonardo DiCaprio and Kate Winslet? It won 11 "
                         "Academy Awards, including Best Picture."),
             ("wrong", "The 1997 film by Steven Spielberg? It won 14 Oscars."),
         ]),
    dict(id="bitcoin", q="What do you know about Bitcoin?",
         ev="Bitcoin is the first decentralized cryptocurrency. It was invented in 2008 by an unknown entity under "
            "the name Satoshi Nakamoto, and the currency began use in 2009.",
         replies=[
             ("restate", "Bitcoin is the first decentralized cryptocurrency. It was invented in 2008 by someone using "
                         "the name Satoshi Nakamoto and began use in 2009."),
             ("invent", "It was invented by Satoshi Nakamoto, and there will only ever be 21 million bitcoins."),
             ("drift", "Bitcoin mining uses more electricity than some countries, which is why Ethereum moved to proof "
                       "of stake."),
         ]),
    dict(id="dolphins", q="Dolphins are so smart!",
         ev="Dolphins are aquatic mammals. They are highly intelligent and use echolocation, emitting clicks and "
            "listening to the echoes to locate objects.",
         replies=[
             ("restate", "They really are highly intelligent! They use echolocation too: they emit clicks and listen "
                         "to the echoes to locate objects."),
             ("invent", "They are! They can recognise themselves in a mirror and call each other by name with "
                        "signature whistles."),
             ("personal", "I swam with dolphins in Mexico once and one of them kept following me around."),
             ("para", "Very clever animals, and they 'see' with sound: they send out clicks and work out where things "
                      "are from what bounces back."),
         ]),
    dict(id="rubik", q="Can you solve a Rubik's cube?",
         ev="The Rubik's Cube is a 3-D combination puzzle invented in 1974 by Hungarian sculptor and professor of "
            "architecture Erno Rubik.",
         replies=[
             ("personal", "Yes, my best time is about two minutes, though I still need to look up some algorithms."),
             ("restate", "Ha, good question! The Rubik's Cube was invented in 1974 by Hungarian sculptor and professor "
                         "of architecture Erno Rubik. Can you?"),
             ("wrong", "It was invented in 1980 by a Hungarian mathematician, Erno Rubik."),
         ]),
    dict(id="bluewhale", q="What's the biggest animal ever?",
         ev="The blue whale is a marine mammal belonging to the baleen whale suborder. Reaching a maximum confirmed "
            "length of 29.9 metres and weighing up to 199 tonnes, it is the largest animal known ever to have existed.",
         replies=[
             ("restate", "The blue whale! It's the largest animal known ever to have existed, reaching up to 29.9 "
                         "metres long and weighing up to 199 tonnes."),
             ("contra", "Probably a dinosaur like Argentinosaurus; the blue whale is only the largest animal alive today."),
             ("para", "That would be the blue whale, a baleen whale measured at almost 30 metres and up to 199 "
                      "tonnes: bigger than anything known, dinosaurs included."),
         ]),
    dict(id="guitar", q="I just bought my first guitar!",
         ev="The guitar is a fretted musical instrument that typically has six strings. The sound is projected either "
            "acoustically, through a hollow wooden body, or through an electrical amplifier and a speaker.",
         replies=[
             ("restate", "Congratulations! Is it acoustic or electric? Acoustic ones project the sound through a hollow "
                         "wooden body, electric ones through an amplifier and a speaker."),
             ("drift", "Congrats! Start with the chords G, C and D; most pop songs only use those three."),
             ("invent", "Nice! Guitars typically have six strings, and the modern six-string guitar was developed in "
                        "Spain in the 1800s."),
         ]),
    dict(id="sourdough", q="I started baking sourdough during lockdown.",
         ev="Sourdough is bread made by the fermentation of dough using wild lactobacillaceae and yeast. The lactic "
            "acid produced by the bacteria gives it a more sour taste and improved keeping qualities.",
         replies=[
             ("restate", "Nice! Sourdough is made by fermenting the dough with wild lactobacillaceae and yeast, and "
                         "the lactic acid is what gives it the sour taste."),
             ("personal", "Me too! My starter is called Doug and he's nearly four years old now."),
             ("para", "Oh fun! The tang comes from bacteria: they ferment the dough together with wild yeast and make "
                      "lactic acid, which also helps the loaf keep longer."),
         ]),
    dict(id="nile", q="Which river is the longest?",
         ev="The Nile is a major north-flowing river in northeastern Africa. It flows into the Mediterranean Sea and "
            "has historically been considered the longest river in the world, though this has been contested.",
         replies=[
             ("restate", "The Nile, in northeastern Africa, has historically been considered the longest river in the "
                         "world, though that has been contested."),
             ("contra", "Definitely the Nile; it has been measured precisely and nobody disputes it."),
             ("wrong", "The Nile, which flows south through Africa into the Indian Ocean."),
         ]),
    dict(id="cheetah", q="How fast can a cheetah run?",
         ev="The cheetah is a large cat native to Africa and central Iran. It is the fastest land animal, capable of "
            "running at 80 to 98 km/h.",
         replies=[
             ("restate", "Between 80 and 98 km/h! It's the fastest land animal."),
             ("wrong", "Up to 130 km/h, and it can keep that speed up for several minutes."),
             ("para", "Really fast: somewhere from 80 to 98 km/h, quicker than any other animal on land."),
         ]),
    dict(id="pyramid", q="How long did it take to build the pyramids?",
         ev="The Great Pyramid of Giza is the largest Egyptian pyramid. It served as the tomb of the Fourth Dynasty "
            "pharaoh Khufu and was built in the early 26th century BC, over a period of about 27 years.",
         replies=[
             ("restate", "The Great Pyramid of Giza, the tomb of the pharaoh Khufu, was built over a period of about "
                         "27 years, in the early 26th century BC."),
             ("invent", "About 27 years for the Great Pyramid, built by around 20,000 paid workers rather than slaves."),
             ("drift", "Hard to say, but the stones were probably moved on sledges over wet sand, which reduced the friction."),
         ]),
    dict(id="worldcup", q="Are you watching the World Cup?",
         ev="The FIFA World Cup is an international association football competition contested by the senior men's "
            "national teams of FIFA members. It has been held every four years since the inaugural tournament in "
            "1930, except in 1942 and 1946 because of the Second World War.",
         replies=[
             ("personal", "Of course! I never miss a match, and I think Brazil will win it again."),
             ("restate", "It's held every four years, since the first tournament in 1930; only 1942 and 1946 were "
                         "skipped, because of the Second World War. Who are you supporting?"),
             ("wrong", "It's held every two years, ever since the first one in 1934."),
         ]),
    dict(id="vangogh", q="I saw Starry Night at the museum today!",
         ev="Vincent van Gogh was a Dutch Post-Impressionist painter who is among the most famous and influential "
            "figures in the history of Western art. In just over a decade, he created approximately 2,100 artworks, "
            "including around 860 oil paintings.",
         replies=[
             ("restate", "How lovely! Van Gogh was a Dutch Post-Impressionist painter, and in just over a decade he "
                         "created around 2,100 artworks, including about 860 oil paintings."),
             ("invent", "Amazing! He painted it in 1889 while staying at an asylum in Saint-Remy."),
             ("personal", "Lucky! It's my favourite painting; I have a print of it above my desk."),
         ]),
    dict(id="lightning", q="Why is there thunder after lightning?",
         ev="Lightning is a natural electrostatic discharge that occurs during a thunderstorm. It heats the "
            "surrounding air to around 30,000 degrees Celsius, and the rapid expansion of the heated air produces thunder.",
         replies=[
             ("restate", "Lightning heats the surrounding air to around 30,000 degrees Celsius, and the rapid "
                         "expansion of that heated air produces the thunder."),
             ("para", "Because the discharge makes the air around it extremely hot, roughly 30,000 degrees, and that "
                      "air expands so fast that it makes the boom you hear."),
             ("drift", "Light travels faster than sound, so you see the flash first; count the seconds and divide by "
                       "three to get the distance in kilometres."),
             ("contra", "Thunder is the sound of clouds bumping into each other when the lightning strikes."),
         ]),
    dict(id="python", q="Should I learn Python as my first language?",
         ev="Python is a high-level, general-purpose programming language. Its design philosophy emphasizes code "
            "readability with the use of significant indentation. It was created by Guido van Rossum and first "
            "released in 1991.",
         replies=[
             ("restate", "Here's something that may help you decide: Python is a general-purpose language whose "
                         "design philosophy emphasizes code readability, with significant indentation."),
             ("personal", "Yes! I learned Python first and wrote my first web scraper in a weekend."),
             ("drift", "Yes, it's the most popular language for data science and machine learning, and most "
                       "universities teach it first."),
         ]),
    dict(id="honey", q="Does honey ever go bad?",
         ev="Honey is a sweet and viscous substance made by several species of bees. Because of its high sugar "
            "content and acidity, honey can be stored for a very long time without spoiling.",
         replies=[
             ("para", "Hardly: all that sugar and its acidity keep it from spoiling, so it lasts a very long time."),
             ("invent", "Almost never; archaeologists found pots of honey in Egyptian tombs that were still edible."),
             ("restate", "Because of its high sugar content and acidity, honey can be stored for a very long time "
                         "without spoiling."),
         ]),
    dict(id="kangaroo", q="Kangaroos are so cute!",
         ev="Kangaroos are marsupials native to Australia. Like other marsupials, the females carry and nurse their "
            "young, called joeys, in a pouch.",
         replies=[
             ("restate", "Aren't they? They're marsupials native to Australia, and the females carry their young, "
                         "called joeys, in a pouch."),
             ("invent", "They are! They can hop at over 50 km/h and can't walk backwards."),
             ("drift", "Koalas are cute too, although they sleep up to 20 hours a day."),
         ]),
    dict(id="mozart", q="Who was Mozart?",
         ev="Wolfgang Amadeus Mozart was a prolific and influential composer of the Classical period. Born in "
            "Salzburg in 1756, he composed more than 800 works, including symphonies, concertos and operas.",
         replies=[
             ("restate", "Wolfgang Amadeus Mozart was a prolific and influential composer of the Classical period, "
                         "born in Salzburg in 1756. He composed more than 800 works!"),
             ("wrong", "A Baroque composer born in Vienna in 1770 who wrote about 300 works."),
             ("para", "A hugely productive composer of the Classical era, born in Salzburg in 1756; he left over 800 "
                      "pieces, from symphonies and concertos to operas."),
             ("invent", "An Austrian composer born in 1756 who wrote his first symphony at the age of eight and died at 35."),
         ]),
]
