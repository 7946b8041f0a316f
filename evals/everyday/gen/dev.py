from cases import *
# ---- math (as people say it)
M=[("sum 12 and 30","12+30"),("what's 12% of 350","0.12*350"),("square root of 1764","42"),
("add 5 and 7","12"),("add 19 to 23","42"),("what is 100 minus 37","63"),("subtract 15 from 60","45"),
("what's 6 times 7","42"),("multiply 12 by 12","144"),("what is 81 divided by 9","9"),("divide 100 by 8","12.5"),
("9 squared","81"),("what is 3 cubed","27"),("2 to the power of 8","256"),("5 raised to the power of 3","125"),
("the average of 10, 20 and 30","20"),("average of 3 and 5","4"),("mean of 2, 4, 6 and 8","5"),
("what's twenty plus twenty two","42"),("what is five times six","30"),("calculate 17 * 23 + 4","395"),
("what is 2 * (3 + 4)","14"),("compute 1.5 * 4","6"),("what's 7 + 8 + 9","24"),("how much is 250 divided by 5","50"),
("what is 15% of 200","30"),("calculate 20 percent of 45","9"),("what's 3 percent of 1000","30"),
("sum of 4, 5 and 6","15"),("the sum of 100 and 250","350"),("what is the product of 6 and 9","54"),
("what is the difference between 100 and 58","42"),("take 7 away from 50","43"),("what's 1000 minus 1","999"),
("what's 45 times 3","135"),("what is 144 over 12","12"),("sqrt of 81","9"),("square root of 2","1.4142135623730951"),
("what is the square root of 144","12"),("12 x 4","48"),("what's ten divided by four","2.5"),("three hundred plus forty","340"),
("what is twelve squared","144"),("calculate 2 ^ 10","1024"),("what is half of 86","43"),("double 21","42"),
("what's 3.5 plus 1.25","4.75"),("add up 10, 20, 30 and 40","100"),("what's 1,200 plus 800","2000"),
("how much is 18 percent of 50","9"),("what is 7 to the power of 2","49"),("compute the average of 90, 85 and 77","84"),
("multiply 25 by 4","100"),("what's 99 plus 1","100"),("subtract 3 from 10","7"),("60 divided by 4","15"),
("what is 4 squared plus 3 squared","25"),("what's the sum of 1, 2, 3, 4 and 5","15"),("calculate (10 + 5) / 3","5"),
("what is forty-two times two","84"),("compute 365 * 24","8760"),("what's 50% of 90","45")]
for q,e in M: c("math",q,calc(e))
# ---- read (named, loose, with/without space)
R=[("what does final.txt in documents say",D,"final.txt"),("read final.txt",D,"final.txt"),("read draft.txt",D,"draft.txt"),
("open todo.txt",D,"todo.txt"),("show me budget.csv",D,"budget.csv"),("what's in meeting-notes.md",D,"meeting-notes.md"),
("read the meeting notes",D,"meeting-notes.md"),("show the meeting notes",D,"meeting-notes.md"),("read the cover letter",D,"letters/cover-letter.txt"),
("open the pancake recipe",D,"recipes/pancakes.md"),("show me the lasagna recipe",D,"recipes/lasagna.md"),("read the rome itinerary",D,"travel/rome-itinerary.md"),
("what does the 2025 report say",D,"report-2025.md"),("read report-2025.md",D,"report-2025.md"),("read the budget",D,"budget.csv"),
("display the work notes",D,"notes/work-notes.txt"),("read my ideas",D,"notes/ideas.md"),("read notes/ideas.md",D,"notes/ideas.md"),
("read the 2023 lease",D,"contracts/lease-2023.txt"),("open the 2024 lease",D,"contracts/lease-2024.txt"),("what does lease-2024.txt say",D,"contracts/lease-2024.txt"),
("read the README in projects",P,"airs/README.md"),("read README.md",P,"airs/README.md"),("show me index.html",P,"website/index.html"),
("read the design notes",P,"airs/design-notes.md"),("read todo.txt in projects",P,"website/todo.txt"),("read the website todo",P,"website/todo.txt"),
("what does the draft say",D,"draft.txt"),("show me the final version",D,"final.txt"),("open the final plan",D,"final.txt"),
("let me see draft.txt",D,"draft.txt"),("print todo.txt",D,"todo.txt"),("view the itinerary",D,"travel/rome-itinerary.md"),
("what's in the cover letter",D,"letters/cover-letter.txt"),("read budget.csv from documents",D,"budget.csv"),
("can you open cover-letter.txt",D,"letters/cover-letter.txt"),("please read the work notes file",D,"notes/work-notes.txt"),
("read me the ideas file",D,"notes/ideas.md"),("show the contents of final.txt",D,"final.txt"),("what does my todo.txt say",D,"todo.txt")]
for q,sp,p in R: c("read",q,[rf(sp,p)])
# ---- extract (PDFs)
X=[("extract the text of the 2024 acme quote","quotes/acme-2024.pdf"),("extract the text of the 2025 acme quote","quotes/acme-2025.pdf"),
("extract the text of attention.pdf","papers/attention.pdf"),("get the text of bm25.pdf","papers/bm25.pdf"),
("extract grammars.pdf","papers/grammars.pdf"),("read the attention paper","papers/attention.pdf"),("open the bm25 paper","papers/bm25.pdf"),
("what does the grammars paper say","papers/grammars.pdf"),("read acme-2024.pdf","quotes/acme-2024.pdf"),("show me the 2025 acme quote","quotes/acme-2025.pdf"),
("extract the text from the acme 2025 pdf","quotes/acme-2025.pdf"),("pull the text of papers/bm25.pdf","papers/bm25.pdf"),
("read quotes/acme-2025.pdf","quotes/acme-2025.pdf"),("extract the text of the attention paper","papers/attention.pdf"),
("what's in the 2024 acme quote","quotes/acme-2024.pdf"),("open grammars.pdf in documents","papers/grammars.pdf"),
("extract text from the grammars paper","papers/grammars.pdf"),("read the text of acme-2025.pdf","quotes/acme-2025.pdf"),
("get me the text of the bm25 paper","papers/bm25.pdf"),("extract attention.pdf from documents","papers/attention.pdf")]
for q,p in X: c("extract",q,[px(D,p)])
# ---- summarize pasted text
T=[("summarize this: the bus was late again and I missed the first ten minutes of the meeting. The driver said a road was closed.","the bus was late again and I missed the first ten minutes of the meeting. The driver said a road was closed."),
("summarize this: Our team shipped the new search page. Users find results faster, and support tickets about search fell by a third.","Our team shipped the new search page. Users find results faster, and support tickets about search fell by a third."),
("tl;dr: The landlord will repaint the hallway next week. Residents should keep the stairs clear on Tuesday and Wednesday. The lift stays in service.","The landlord will repaint the hallway next week. Residents should keep the stairs clear on Tuesday and Wednesday. The lift stays in service."),
("the gist of the following: Solar panels on the school roof now cover 40 percent of its power. The savings pay for two new teachers.","Solar panels on the school roof now cover 40 percent of its power. The savings pay for two new teachers."),
("summarize the following: Rain is expected all weekend. The outdoor concert moves to the town hall. Tickets remain valid.","Rain is expected all weekend. The outdoor concert moves to the town hall. Tickets remain valid."),
("please summarize this text: The clinic opens an hour earlier from Monday. Appointments can now be booked online. Walk-ins are still welcome in the afternoon.","The clinic opens an hour earlier from Monday. Appointments can now be booked online. Walk-ins are still welcome in the afternoon."),
("summarise this: Trains between the two cities will run every 15 minutes from June. The journey takes 50 minutes. Fares stay the same.","Trains between the two cities will run every 15 minutes from June. The journey takes 50 minutes. Fares stay the same."),
("tldr: The library is extending its opening hours during exams. It will be open until midnight from 1 to 21 June. Quiet rooms must be booked.","The library is extending its opening hours during exams. It will be open until midnight from 1 to 21 June. Quiet rooms must be booked."),
("give me the gist of this: Sales rose in every region except the north, where a warehouse fire delayed deliveries for three weeks.","Sales rose in every region except the north, where a warehouse fire delayed deliveries for three weeks."),
("summarize this for me: The museum is closed on Mondays. Entry is free on the first Sunday of the month. Guided tours start at 11.","The museum is closed on Mondays. Entry is free on the first Sunday of the month. Guided tours start at 11."),
("can you summarize this: My flight was cancelled, the airline rebooked me for tomorrow morning and gave me a hotel voucher.","My flight was cancelled, the airline rebooked me for tomorrow morning and gave me a hotel voucher."),
("key points of the following: The budget grows 5 percent. Hiring is frozen until autumn. Travel needs approval from the director.","The budget grows 5 percent. Hiring is frozen until autumn. Travel needs approval from the director."),
("sum up this: The cafe now opens at seven. Oat milk costs no extra. The terrace is closed for repairs until May.","The cafe now opens at seven. Oat milk costs no extra. The terrace is closed for repairs until May."),
("summarize: The vote was postponed to next week because three members were ill. The agenda stays the same.","The vote was postponed to next week because three members were ill. The agenda stays the same."),
("tl;dr of this: Our internet provider raises prices by 3 euros in April. Customers can switch plans for free until the end of March.","Our internet provider raises prices by 3 euros in April. Customers can switch plans for free until the end of March.")]
for q,t in T: c("summarize_text",q,[summ(t)])
c("summarize_text","summarize this in 20 words: The river flooded the lower town overnight. Schools are closed, and volunteers are filling sandbags at the church.",[summ("The river flooded the lower town overnight. Schools are closed, and volunteers are filling sandbags at the church.", max_words=20)])
c("summarize_text","summarize \"The board approved the merger. Shareholders vote next month. Staff keep their jobs.\"",[summ("The board approved the merger. Shareholders vote next month. Staff keep their jobs.")])
# ---- summarize a file
F=[("summarize the meeting notes",(D,"meeting-notes.md")),("summarize final.txt",(D,"final.txt")),("summarize the attention paper",(D,"papers/attention.pdf")),
("summarize the 2025 acme quote",(D,"quotes/acme-2025.pdf")),("give me a summary of the 2025 report",(D,"report-2025.md")),("summarize bm25.pdf",(D,"papers/bm25.pdf")),
("summarize the cover letter",(D,"letters/cover-letter.txt")),("sum up the draft",(D,"draft.txt")),("tl;dr of the grammars paper",(D,"papers/grammars.pdf")),
("summarize the rome itinerary",(D,"travel/rome-itinerary.md")),("what's the gist of the meeting notes",(D,"meeting-notes.md")),
("summarize the 2023 lease",(D,"contracts/lease-2023.txt")),("summarize README.md",(P,"airs/README.md")),("summarize the design notes",(P,"airs/design-notes.md")),
("give me the key points of report-2025.md",(D,"report-2025.md")),("summarize the work notes",(D,"notes/work-notes.txt")),
("summarize acme-2024.pdf",(D,"quotes/acme-2024.pdf")),("summarize the text of the bm25 paper",(D,"papers/bm25.pdf")),
("can you summarize the final version",(D,"final.txt")),("summarize meeting-notes.md in documents",(D,"meeting-notes.md"))]
for q,f in F: c("summarize_file",q,sumf(f))
c("summarize_file","summarize the attention paper in 50 words",sumf((D,"papers/attention.pdf"),max_words=50))
c("summarize_file","summarize final.txt in 30 words",sumf((D,"final.txt"),max_words=30))
# ---- compare
C=[("compare the two acme quotes",(D,"quotes/acme-2024.pdf"),(D,"quotes/acme-2025.pdf")),("what changed between draft.txt and final.txt",(D,"draft.txt"),(D,"final.txt")),
("compare draft.txt and final.txt",(D,"draft.txt"),(D,"final.txt")),("compare the draft and the final version",(D,"draft.txt"),(D,"final.txt")),
("compare acme-2024.pdf and acme-2025.pdf",(D,"quotes/acme-2024.pdf"),(D,"quotes/acme-2025.pdf")),("compare the 2024 acme quote with the 2025 acme quote",(D,"quotes/acme-2024.pdf"),(D,"quotes/acme-2025.pdf")),
("diff lease-2023.txt and lease-2024.txt",(D,"contracts/lease-2023.txt"),(D,"contracts/lease-2024.txt")),("compare the two leases",(D,"contracts/lease-2023.txt"),(D,"contracts/lease-2024.txt")),
("what changed between the 2023 lease and the 2024 lease",(D,"contracts/lease-2023.txt"),(D,"contracts/lease-2024.txt")),("compare the pricing in acme-2024.pdf and acme-2025.pdf",(D,"quotes/acme-2024.pdf"),(D,"quotes/acme-2025.pdf")),
("what are the differences between the draft and the final",(D,"draft.txt"),(D,"final.txt")),("compare the pancake recipe with the lasagna recipe",(D,"recipes/pancakes.md"),(D,"recipes/lasagna.md")),
("compare the attention paper and the bm25 paper",(D,"papers/attention.pdf"),(D,"papers/bm25.pdf")),("compare bm25.pdf with grammars.pdf",(D,"papers/bm25.pdf"),(D,"papers/grammars.pdf")),
("diff draft.txt final.txt",(D,"draft.txt"),(D,"final.txt")),("compare todo.txt in projects with todo.txt in documents",None,None),
("compare the meeting notes and the work notes",(D,"meeting-notes.md"),(D,"notes/work-notes.txt")),("what changed from acme-2024.pdf to acme-2025.pdf",(D,"quotes/acme-2024.pdf"),(D,"quotes/acme-2025.pdf")),
("show the differences between lease-2023.txt and lease-2024.txt",(D,"contracts/lease-2023.txt"),(D,"contracts/lease-2024.txt")),("compare README.md and design-notes.md",(P,"airs/README.md"),(P,"airs/design-notes.md"))]
for q,a,b in C:
    if a is None: continue
    c("compare",q,cmp2(a,b))
# ---- list
L=[("list the files in my documents folder",lst(D)),("list my documents",lst(D)),("what files are in documents",lst(D)),("list the files in projects",lst(P)),
("list the pdfs in the papers folder",lst(D,dir="papers",pattern="*.pdf",recursive=True)),("list the files in the papers folder",lst(D,dir="papers")),("what's in the quotes folder",lst(D,dir="quotes")),
("list the recipes folder",lst(D,dir="recipes")),("show me the files in the contracts folder",lst(D,dir="contracts")),("list all pdf files in documents",lst(D,pattern="*.pdf",recursive=True)),
("list all pdfs in documents recursively",lst(D,pattern="*.pdf",recursive=True)),("list every file in documents including subfolders",lst(D,recursive=True)),
("which files are in the notes folder",lst(D,dir="notes")),("list the txt files in documents",lst(D,pattern="*.txt",recursive=True)),("list the markdown files in documents",lst(D,pattern="*.md",recursive=True)),
("what's in the website folder",lst(P,dir="website")),("list the files in the airs folder in projects",lst(P,dir="airs")),("list the files in documents",lst(D)),
("show me the files in my documents",lst(D)),("how many files are in projects",lst(P)),("list files in the travel folder",lst(D,dir="travel")),
("what documents do I have",lst(D)),("list the csv files in documents",lst(D,pattern="*.csv",recursive=True)),("find all pdfs in documents",lst(D,pattern="*.pdf",recursive=True)),
("list the letters folder",lst(D,dir="letters"))]
for q,s in L: c("list",q,s)
# ---- every file of a folder
E=[("summarize every paper in the papers folder",every(D,"papers","pdf-extract")),("summarize each quote in the quotes folder",every(D,"quotes","pdf-extract")),
("summarize all the recipes in the recipes folder",every(D,"recipes","read-file")),("summarize each file in the contracts folder",every(D,"contracts","read-file")),
("summarize all pdfs in the papers folder",every(D,"papers","pdf-extract",pattern="*.pdf")),("summarize every file in the notes folder",None),
("summarize every document in the letters folder",every(D,"letters","read-file")),("summarize each of the papers in papers",every(D,"papers","pdf-extract"))]
for q,s in E:
    if s: c("every",q,s)
# ---- delete (explicit)
X2=[("delete todo.txt",D,"todo.txt"),("delete draft.txt in documents",D,"draft.txt"),("remove final.txt",D,"final.txt"),("erase budget.csv",D,"budget.csv"),
("get rid of the draft",D,"draft.txt"),("delete the cover letter",D,"letters/cover-letter.txt"),("please delete meeting-notes.md",D,"meeting-notes.md"),
("trash the 2023 lease",D,"contracts/lease-2023.txt"),("delete the 2024 acme quote",D,"quotes/acme-2024.pdf"),("remove the work notes file",D,"notes/work-notes.txt"),
("delete quotes/acme-2025.pdf",D,"quotes/acme-2025.pdf"),("throw away the pancake recipe",D,"recipes/pancakes.md"),("delete ideas.md",D,"notes/ideas.md"),
("remove the rome itinerary from documents",D,"travel/rome-itinerary.md"),("delete report-2025.md",D,"report-2025.md")]
for q,sp,p in X2: c("delete",q,dele(sp,p))
# not a delete: words near deletion but no ask
c("no_delete","what does the removed section of final.txt say",[rf(D,"final.txt")])
c("no_delete","don't delete anything, just read todo.txt",[rf(D,"todo.txt")])
c("no_delete","read draft.txt before I delete it",[rf(D,"draft.txt")])
c("no_delete","which lines were removed between draft.txt and final.txt",cmp2((D,"draft.txt"),(D,"final.txt")))
c("no_delete","summarize final.txt, do not remove it",sumf((D,"final.txt")))
# ---- ambiguous
c("ambiguous","read the acme quote",choices=["documents:quotes/acme-2024.pdf","documents:quotes/acme-2025.pdf"])
c("ambiguous","extract the text of the acme quote",choices=["documents:quotes/acme-2024.pdf","documents:quotes/acme-2025.pdf"])
c("ambiguous","open the lease",choices=["documents:contracts/lease-2023.txt","documents:contracts/lease-2024.txt"])
c("ambiguous","summarize the lease",choices=["documents:contracts/lease-2023.txt","documents:contracts/lease-2024.txt"])
c("ambiguous","read the todo list",choices=["documents:todo.txt","projects:website/todo.txt"])
c("ambiguous","delete the acme quote",choices=["documents:quotes/acme-2024.pdf","documents:quotes/acme-2025.pdf"])
c("ambiguous","read the notes",choices=["documents:meeting-notes.md","documents:notes/work-notes.txt","projects:airs/design-notes.md"])
c("ambiguous","show me the recipe",choices=None) if False else None
c("ambiguous","what does the quote say",choices=["documents:quotes/acme-2024.pdf","documents:quotes/acme-2025.pdf"])
# ---- missing
for q in ["read nothing-here.txt","summarize minutes-2020.md","compare old.pdf and new.pdf","extract the text of invoice-77.pdf","open report-1999.docx",
          "delete ghost.txt","what does plan-b.txt say","read documents/holiday.md"]:
    c("missing",q,error="not_found")
for q in ["list the files in my downloads folder","what's in my downloads","list my desktop","show me the files in my pictures folder",
          "read the files in ~/Downloads","list my music folder"]:
    c("missing_space",q,error="space_missing")
# ---- off-topic
for q in ["tell me a joke","what's the weather like on mars","book a flight to Tokyo","who wrote Hamlet","play some jazz","order a pizza",
          "how do I tie a tie","what time is it in New York","recommend a good movie","write a haiku about the sea","what is the capital of Peru",
          "how tall is the Eiffel tower","remind me to call mum","turn off the lights","good morning","thanks, that's all",
          "what's your name","how are you today","sing me a song","translate hello into klingon","give me a recipe for soup",
          "what's the best programming language","find me a plumber nearby","what's the meaning of life","hi there"]:
    c("offtopic",q)
# ---- MCP-style tools
W=[("what's the weather in Lisbon",{"city":"Lisbon"}),("weather forecast for Berlin",{"city":"Berlin"}),("will it rain in Paris",{"city":"Paris"}),
("what's the forecast for Madrid for 5 days",{"city":"Madrid","days":5}),("how's the weather in Tokyo",{"city":"Tokyo"})]
for q,a in W: c("mcp",q,mcp("weather.get_forecast",**a))
for q,a in [("create an issue in acme/web titled \"Fix the footer\"",{"repo":"acme/web","title":"Fix the footer"}),
            ("open a github issue in acme/api called \"Timeouts on login\"",{"repo":"acme/api","title":"Timeouts on login"}),
            ("file an issue on acme/docs with title \"Broken link\"",{"repo":"acme/docs","title":"Broken link"})]:
    c("mcp",q,mcp("github.create_issue",**a))
for q,a in [("list the open pull requests in acme/web",{"repo":"acme/web","state":"open"}),("show pull requests for acme/api",{"repo":"acme/api"}),
            ("list all pull requests in acme/docs",{"repo":"acme/docs","state":"all"}),("closed pull requests in acme/web",{"repo":"acme/web","state":"closed"})]:
    c("mcp",q,mcp("github.list_pull_requests",**a))
for q,a in [("send \"lunch is here\" to #general on slack",{"channel":"#general","text":"lunch is here"}),
            ("post \"deploy done\" in the #ops slack channel",{"channel":"#ops","text":"deploy done"})]:
    c("mcp",q,mcp("slack.send_message",**a))
for q,a in [("convert 100 EUR to USD",{"amount":100,"from":"EUR","to":"USD"}),("how much is 50 GBP in EUR",{"amount":50,"from":"GBP","to":"EUR"}),
            ("convert 2000 JPY to CHF",{"amount":2000,"from":"JPY","to":"CHF"})]:
    c("mcp",q,mcp("currency.convert",**a))
for q,a in [("translate \"where is the station\" into german",{"text":"where is the station","target_language":"german"}),
            ("translate 'thank you very much' to spanish",{"text":"thank you very much","target_language":"spanish"}),
            ("translate \"see you tomorrow\" into italian",{"text":"see you tomorrow","target_language":"italian"})]:
    c("mcp",q,mcp("translate.translate_text",**a))
for q,a in [("what's on my calendar on 2026-05-02",{"date":"2026-05-02"}),("list my calendar events on 2026-01-15",{"date":"2026-01-15"})]:
    c("mcp",q,mcp("calendar.list_events",**a))
for q,a in [("create a calendar event \"dentist\" on 2026-04-10",{"title":"dentist","date":"2026-04-10"}),
            ("add \"team lunch\" to my calendar on 2026-02-20",{"title":"team lunch","date":"2026-02-20"})]:
    c("mcp",q,mcp("calendar.create_event",**a))
c("mcp","delete the note \"shopping list\"",mcp("notes.delete_note",title="shopping list"))
c("mcp","remove my note called \"old ideas\"",mcp("notes.delete_note",title="old ideas"))
c("mcp_no_delete","what notes do I have about the trip")  # no list-notes tool: none, and never delete
c("mcp","translate the meeting notes into french",[rf(D,"meeting-notes.md"),{"tool":"translate.translate_text","args":{"text":ref(1),"target_language":"french"}}])
c("mcp","translate final.txt to portuguese",[rf(D,"final.txt"),{"tool":"translate.translate_text","args":{"text":ref(1),"target_language":"portuguese"}}])
# ---- two steps
c("two_step","read final.txt and then summarize it",sumf((D,"final.txt")))
c("two_step","extract the text of bm25.pdf then summarize it",sumf((D,"papers/bm25.pdf")))
c("two_step","open the meeting notes, then summarize them",sumf((D,"meeting-notes.md")))
c("two_step","read the 2025 report and summarize it",sumf((D,"report-2025.md")))
c("two_step","extract the 2024 acme quote and summarize it",sumf((D,"quotes/acme-2024.pdf")))
c("two_step","list the pdfs in the papers folder, then summarize them",every(D,"papers","pdf-extract",pattern="*.pdf"))
c("two_step","find the pdfs in quotes then summarize them",every(D,"quotes","pdf-extract",pattern="*.pdf"))
c("two_step","read draft.txt and final.txt and compare them",cmp2((D,"draft.txt"),(D,"final.txt")))
dump("../testdata/dev.jsonl")
print(len(out))
